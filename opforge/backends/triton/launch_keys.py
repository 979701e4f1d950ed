"""Compiled = executed: the CPU run interprets only launches its build compiled for the target
(worker side; NVIDIA Triton and Triton-Ascend share it).

The build job runs the candidate's forward with launches recorded as no-ops and compiles them; the
run job interprets real launches. A candidate can tell the two apart (a probe kernel's output is
written only in the run, an attribute only the interpreter's kernel object has, a variant's shape),
so it could compile one kernel and run another: a tile the target cannot hold, a construct its
compiler refuses, a branch that computes only on the CPU. Each interpreted launch (checked at the
innermost run, under any autotune or heuristics wrapper) therefore has a key, and the run refuses
(`unbuilt-launch`) any key the build did not compile.

A key is the kernel's identity (its bytecode and the module globals it really loads, recursively
through the jit functions it calls), each parameter's type or constexpr value, and the compile
options (num_warps, num_stages, ...). Only LOAD_GLOBAL/LOAD_NAME count as globals: an attribute
name (`tl.math.exp`'s `math`) is not one, so a module global the interpreter or anything else adds
later does not change the identity of a kernel that never reads it.
"""
from __future__ import annotations

import dis
import hashlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
from functools import lru_cache
from types import CodeType, FunctionType, ModuleType
from typing import Any

GLOBAL_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
BUILD_TIMEOUT_S = 600
# What the run job's build compiled, and why it failed if it did: set once by the worker's setup,
# before the guards' snapshot (watched, so the candidate cannot rebind them).
BUILT: frozenset[str] = frozenset()
BUILD_REASONS: tuple[str, ...] = ()


class UnbuiltLaunch(RuntimeError):
    """An interpreted launch the build never compiled: raised in the candidate's forward."""


def _code_digest(code: CodeType, digest: Any) -> None:
    digest.update(code.co_code)
    digest.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, CodeType):
            _code_digest(const, digest)
        else:
            digest.update(repr(const).encode())


def global_loads(code: CodeType) -> set[str]:
    """The names `code` (and the code nested in it: lambdas, comprehensions) reads as globals."""
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in GLOBAL_LOADS}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= global_loads(const)
    return names


@lru_cache(maxsize=256)
def _code_part(code: CodeType) -> tuple[bytes, tuple[str, ...]]:
    """(digest of the bytecode, the globals it loads, sorted): once per code object, not per launch."""
    digest = hashlib.blake2b(digest_size=16)
    _code_digest(code, digest)
    return digest.digest(), tuple(sorted(global_loads(code)))


def _shown(value: Any, depth: int) -> str:
    inner = getattr(value, "fn", None)
    if isinstance(inner, FunctionType) and depth < 8:
        return "fn:" + identity(inner, depth + 1)
    if isinstance(value, ModuleType):
        return "module:" + value.__name__
    if isinstance(value, (int, float, bool, str, bytes, type(None))):
        return repr(value)
    if hasattr(value, "value") and type(value).__name__ == "constexpr":
        return "constexpr:" + repr(value.value)
    return "type:" + type(value).__qualname__


def identity(fn: FunctionType, depth: int = 0) -> str:
    """A digest of a kernel's bytecode and of the module globals it loads, recursively through the
    jit functions it calls: equal in the build and the run job exactly when both launch the same
    code with the same module-level constants (a name it loads that is not bound counts as unbound)."""
    code_digest, names = _code_part(fn.__code__)
    digest = hashlib.blake2b(code_digest, digest_size=16)
    for name in names:
        shown = _shown(fn.__globals__[name], depth) if name in fn.__globals__ else "<unbound>"
        digest.update(f"{name}={shown};".encode())
    return digest.hexdigest()


def launch_key(fn: FunctionType, args: tuple, kwargs: dict) -> str:
    """The kernel's identity with each parameter's type, or its value where it is a constexpr, and
    the compile options the launch passed."""
    from opforge.backends.triton.aot import OPTION_KEYS, type_of

    params = inspect.signature(fn).parameters
    bound = {n: p.default for n, p in params.items() if p.default is not inspect.Parameter.empty}
    bound.update(zip(params, args))
    bound.update({k: v for k, v in kwargs.items() if k in params})
    parts = []
    for name, param in params.items():
        value = bound.get(name)
        kind = _kind(value, type_of)
        if "constexpr" in str(param.annotation) or kind == "constexpr":
            parts.append(f"{name}={_constexpr(getattr(value, 'value', value))}")
        else:
            parts.append(f"{name}:{kind}")
    parts += [f"{k}={kwargs[k]!r}" for k in OPTION_KEYS if k not in params and kwargs.get(k) is not None]
    return f"{fn.__name__}[{identity(fn)}]({', '.join(parts)})"


def _kind(value: Any, type_of: Any) -> str:
    """A runtime argument's type; a tuple's element by element (tensors by dtype, never their data)."""
    if isinstance(value, (tuple, list)):
        kinds = [_kind(v, type_of) for v in value]
        return "(" + ", ".join(k if k != "constexpr" else _constexpr(v) for k, v in zip(kinds, value)) + ")"
    return type_of(value)


def _constexpr(value: Any) -> str:
    """A constexpr's value; a jit function (an activation passed to a kernel) by its identity: a
    JITFunction in the build, an InterpretedFunction in the run, the same code in both."""
    inner = getattr(value, "fn", None)
    return "fn:" + identity(inner) if isinstance(inner, FunctionType) else repr(value)


def key_of(fn: Any, args: tuple, kwargs: dict) -> str | None:
    """The key of one recorded launch of a jit function (as the build compiles it), None when it
    does not bind."""
    try:
        return launch_key(fn.fn, args, kwargs)
    except Exception:
        return None


def keys_of_recorded(launches: list) -> list[str]:
    """The keys of a build's recorded launches, every autotune config of each (aot.expanded)."""
    from opforge.backends.triton import aot

    return sorted({k for launch in aot.expanded(launches) if (k := key_of(launch.kernel, launch.args, launch.kwargs))})


def require_built() -> None:
    """Every interpreted launch (checked at the innermost run, under any autotune or heuristics
    wrapper) must be one the run job's build compiled."""
    from triton.runtime import interpreter

    cls = interpreter.InterpretedFunction
    original = cls.__init__

    def __init__(self, fn, **kwargs):
        original(self, fn, **kwargs)
        run = self.run

        def checked(*args, **kw):
            key = launch_key(self.fn, args, kw)
            if key not in BUILT and _binds(self.fn, args, kw):  # else the launch's own error says why
                _refuse(self.fn.__name__, key)
            return run(*args, **kw)

        self.run = checked

    cls.__init__ = __init__


def _binds(fn: FunctionType, args: tuple, kwargs: dict) -> bool:
    params = inspect.signature(fn).parameters
    try:
        inspect.signature(fn).bind(*args, **{k: v for k, v in kwargs.items() if k in params})
    except TypeError:
        return False
    return True


def _refuse(name: str, key: str) -> None:
    from opforge.harness.guards import ACCUSED

    message = (f"unbuilt-launch: {name} was launched as {key.split(']', 1)[1]}, which the build never "
               "compiled for the target (the build's forward launched other kernels, constants, block sizes "
               "or options than the run's)")
    ACCUSED.record(f"runtime-error: {message}"[:300])  # refused even where the candidate catches it
    raise UnbuiltLaunch(message)


def build_first(job: dict) -> None:
    """Keep the keys the build compiled and its reasons, if any, as the run's (BUILD_REASONS): those
    of the CPU verification's build phase when the job carries them (`built`), else of a build job
    run here in a child process (the same jail)."""
    global BUILT, BUILD_REASONS
    built = job.get("built")
    if isinstance(built, dict):  # a CPU verification's build phase, done just before this run (worker.run_phases)
        BUILT = frozenset(str(k) for k in built.get("launch_keys") or [])
        BUILD_REASONS = tuple(str(r) for r in built.get("reasons") or [])
    else:
        BUILT, BUILD_REASONS = _child_build(job)


def _child_build(job: dict) -> tuple[frozenset[str], tuple[str, ...]]:
    with tempfile.TemporaryDirectory(prefix="opforge-build-") as tmp:
        child = {**job, "mode": "build", "result_path": os.path.join(tmp, "build.json")}
        path = os.path.join(tmp, "job.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(child, fh)
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        try:
            subprocess.run([sys.executable, "-I", "-B", "-m", "opforge.harness.worker", path], env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=BUILD_TIMEOUT_S, check=False)
            with open(child["result_path"], encoding="utf-8") as fh:
                build = json.load(fh).get("build") or {}
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            return frozenset(), (f"runtime-error: the run job's own build did not finish: {type(exc).__name__}: "
                                 f"{exc}"[:300],)
    return frozenset(build.get("launch_keys") or []), tuple(str(r) for r in build.get("reasons") or [])
