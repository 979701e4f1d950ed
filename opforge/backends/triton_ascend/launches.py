"""What the interpreted run may launch: only what Ascend could (worker side, CPU run).

The interpreter runs anything Python can, so two rules of the NPU are enforced at each launch of
the CPU run, or the run would vouch for kernels the NPU refuses:

- a launch has at most 65535 programs (`guard_grid`: checked where the interpreter resolves the
  grid, so a callable grid, a variant's shape and a run-only launch are all counted);
- a load or store touches only the memory of the launch's tensor arguments, and no two programs
  race (backends/triton/memory.py, shared with NVIDIA Triton): the interpreter reads whatever host
  memory an unmasked pointer lands on and writes it too, where the NPU reads other tensors' global
  memory or faults;
- every launch was frontend-compiled (`require_built`). The build job records the launches of
  no-op'd forwards and the run job interprets real ones, and a candidate can tell the two apart
  (a probe kernel's output is written only in the run), so it could compile a kernel that fits
  the unified buffer and run one that does not. The run job therefore builds first itself, in a
  child build job (same candidate, same inputs, so the same front end), and refuses any launch
  whose kernel code, referenced globals, argument types or constexpr values that build did not
  compile.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
from types import CodeType, FunctionType, ModuleType
from typing import Any

from opforge.backends.triton_ascend import toolchain

BUILD_TIMEOUT_S = 600
# What the run job's own build compiled, and why it failed if it did: set once by the worker's
# setup, before the guards' snapshot (watched, so the candidate cannot rebind them).
BUILT: frozenset[str] = frozenset()
BUILD_REASONS: tuple[str, ...] = ()


class AscendLaunchError(RuntimeError):
    """A launch the NPU could not run as checked: raised in the candidate's forward."""


def _code_digest(code: CodeType, digest: Any) -> None:
    digest.update(code.co_code)
    digest.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, CodeType):
            _code_digest(const, digest)
        else:
            digest.update(repr(const).encode())


def _names(code: CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _names(const)
    return names


def identity(fn: FunctionType, depth: int = 0) -> str:
    """A digest of a kernel's bytecode and of the module globals it reads, recursively through the
    jit functions it calls: equal in the build and the run job exactly when both launch the same
    code with the same module-level constants."""
    digest = hashlib.blake2b(digest_size=16)
    _code_digest(fn.__code__, digest)
    for name in sorted(_names(fn.__code__)):
        if name not in fn.__globals__:
            continue
        value = fn.__globals__[name]
        inner = getattr(value, "fn", None)
        if isinstance(inner, FunctionType) and depth < 8:
            shown = "fn:" + identity(inner, depth + 1)
        elif isinstance(value, ModuleType):
            shown = "module:" + value.__name__
        elif isinstance(value, (int, float, bool, str, bytes, type(None))):
            shown = repr(value)
        elif hasattr(value, "value") and type(value).__name__ == "constexpr":
            shown = "constexpr:" + repr(value.value)
        else:
            shown = "type:" + type(value).__qualname__
        digest.update(f"{name}={shown};".encode())
    return digest.hexdigest()


def launch_key(fn: FunctionType, args: tuple, kwargs: dict) -> str:
    """The kernel's identity with each parameter's type, or its value where it is a constexpr."""
    from opforge.backends.triton.aot import type_of

    params = inspect.signature(fn).parameters
    bound = {n: p.default for n, p in params.items() if p.default is not inspect.Parameter.empty}
    bound.update(zip(params, args))
    bound.update({k: v for k, v in kwargs.items() if k in params})
    parts = []
    for name, param in params.items():
        value = bound.get(name)
        kind = type_of(value)
        if "constexpr" in str(param.annotation) or kind == "constexpr":
            parts.append(f"{name}={getattr(value, 'value', value)!r}")
        else:
            parts.append(f"{name}:{kind}")
    return f"{fn.__name__}[{identity(fn)}]({', '.join(parts)})"


def key_of_recorded(launch: Any) -> str | None:
    """The key of one build-job launch (as aot.signature_of unwraps it), None when it does not bind."""
    from opforge.backends.triton import aot

    try:
        fn, kwargs = aot.unwrap(launch.kernel, launch.kwargs)
        return launch_key(fn.fn, launch.args, kwargs)
    except Exception:
        return None


def guard_grid() -> None:
    """Refuse, as the NPU's launch would, a grid of more programs than one launch may have."""
    from triton.runtime import interpreter

    builder = type(interpreter.interpreter_builder)
    original = builder.set_grid_dim

    def set_grid_dim(self, nx, ny, nz):
        if nx * ny * nz > toolchain.MAX_PROGRAMS:
            raise AscendLaunchError(f"grid-too-large: a launch of {nx * ny * nz} programs ({nx}, {ny}, {nz}); "
                                    f"{toolchain.GRID_LIMIT}")
        return original(self, nx, ny, nz)

    builder.set_grid_dim = set_grid_dim


def require_built() -> None:
    """Every interpreted launch (checked at the innermost run, under any autotune or heuristics
    wrapper) must be one the run job's own build compiled."""
    from triton.runtime import interpreter

    cls = interpreter.InterpretedFunction
    original = cls.__init__

    def __init__(self, fn, **kwargs):
        original(self, fn, **kwargs)
        run = self.run

        def checked(*args, **kw):
            key = launch_key(self.fn, args, kw)
            if key not in BUILT:
                raise AscendLaunchError(f"unbuilt-launch: {self.fn.__name__} was launched as {key.split(']', 1)[1]}, "
                                    "which the front end never compiled (the build's forward launched other kernels, "
                                    "constants or block sizes than the run's)")
            return run(*args, **kw)

        self.run = checked

    cls.__init__ = __init__


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
    with tempfile.TemporaryDirectory(prefix="opforge-ascend-build-") as tmp:
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
