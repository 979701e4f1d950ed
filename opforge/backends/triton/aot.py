"""Ahead-of-time compilation of the launches a candidate makes, for a real GPU target.

The interpreter accepts code the GPU compiler rejects (non-power-of-two aranges, small tl.dot
tiles...), so every launch signature seen while the candidate runs is compiled for the target
(default sm_90) and its registers, spills and shared memory are read back with ptxas / cuobjdump.
The PTX also says at what precision the tensor cores multiply: a float32 op whose kernel feeds them
tf32 (tl.dot's default for fp32 operands), fp16, bf16 or fp8 operands is reported, since such a
kernel only passes the value comparison when the test inputs happen to be benign.
Runs in the worker with TRITON_INTERPRET unset; no GPU is needed.
"""
from __future__ import annotations

import inspect
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction

from opforge.backends.triton import resources
from opforge.harness.guards import RecordedLaunch

TYPE_NAMES = {
    torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64",
    torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64", torch.uint8: "u8",
    torch.bool: "i1", torch.float8_e4m3fn: "fp8e4nv", torch.float8_e5m2: "fp8e5",
}
OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")

# Tensor-core instructions (mma.sync on sm_80+, wgmma on sm_90, tcgen05.mma on sm_100), optionally
# predicated; their dotted suffixes name the operand types, tcgen05's `kind::` names the family.
MMA = re.compile(r"^\s*(?:@!?%\w+\s+)?((?:wgmma\.mma_async|mma|tcgen05\.mma)(?:\.[\w:]+)*)", re.M)
REDUCED_TYPES = {"tf32": "tf32", "f16": "fp16", "bf16": "bf16", "e4m3": "fp8e4m3", "e5m2": "fp8e5m2",
                 "e3m2": "fp6", "e2m3": "fp6", "e2m1": "fp4", "s8": "int8", "u8": "int8", "s4": "int4",
                 "u4": "int4", "b1": "int1", "kind::tf32": "tf32", "kind::f16": "fp16/bf16",
                 "kind::f8f6f4": "fp8/fp6/fp4", "kind::mxf8f6f4": "fp8/fp6/fp4", "kind::mxf4": "fp4",
                 "kind::mxf4nvf4": "fp4", "kind::i8": "int8"}
# tl.dot(input_precision=...) on fp32 operands that Triton emulates with several reduced-precision
# products, and the mma precisions each leaves in the PTX: tf32x3 and bf16x6 come within a few ulps
# of fp32, bf16x3 keeps ~16 mantissa bits. PLAIN: what a dot on half operands leaves there.
EMULATIONS = {"tf32x3": {"tf32"}, "bf16x6": {"bf16", "fp16/bf16"}, "bf16x3": {"bf16", "fp16/bf16"}}
NEAR_FP32 = {"tf32x3", "bf16x6"}
PLAIN = {"f16": {"fp16", "fp16/bf16"}, "bf16": {"bf16", "fp16/bf16"}}
# `tt.dot %a, %b, %c[, inputPrecision = tf32] : tensor<64x64xf32> * ...`; no precision means ieee.
TTIR_DOT = re.compile(r"\btt\.dot\s[^:\n]*?(?:inputPrecision = (\w+)[^:\n]*)?:\s*tensor<(?:\d+x)*(\w+)")


def type_of(value: Any) -> str:
    """A launch argument's type in a Triton signature (`*fp16`, `i32`...; `constexpr` for anything else)."""
    if isinstance(value, torch.Tensor):
        return "*" + TYPE_NAMES.get(value.dtype, "fp32")
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -(2**31) <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    return "constexpr"


def expansions(kernel: Any, kwargs: dict, args: tuple = ()) -> list[tuple[JITFunction, dict]]:
    """Peel autotune/heuristics wrappers: one (jit function, kwargs) per autotune config (a GPU run
    benchmarks, so compiles, every one), heuristics' values computed as Triton does (from the
    positional and keyword arguments)."""
    done, todo = [], [(kernel, dict(kwargs))]
    while todo:
        kernel, kwargs = todo.pop(0)
        if isinstance(kernel, JITFunction):
            done.append((kernel, kwargs))
        elif isinstance(kernel, Autotuner):
            todo += [(kernel.fn, {**kwargs, **(c.all_kwargs() if hasattr(c, "all_kwargs") else c.kwargs)})
                     for c in kernel.configs]
        elif isinstance(kernel, Heuristics):
            named = dict(zip(getattr(kernel, "arg_names", ()), args))
            for name, fn in kernel.values.items():
                kwargs[name] = fn({**named, **kwargs})
            todo.append((kernel.fn, kwargs))
        else:
            raise TypeError(f"cannot compile a {type(kernel).__name__}")
    return done


def unwrap(kernel: Any, kwargs: dict, args: tuple = ()) -> tuple[JITFunction, dict]:
    """The first of `expansions`: an autotuner's first config."""
    return expansions(kernel, kwargs, args)[0]


def expanded(launches: list[RecordedLaunch]) -> list[RecordedLaunch]:
    """Each launch as the jit-function launches it stands for (`expansions`); one that cannot be
    peeled is kept as it is, for signature_of to report."""
    out = []
    for launch in launches:
        try:
            out += [RecordedLaunch(fn, launch.name, launch.args, kwargs, launch.grid)
                    for fn, kwargs in expansions(launch.kernel, launch.kwargs, launch.args)]
        except Exception:
            out.append(launch)
    return out


class BadLaunch(Exception):
    """The launch does not bind to the kernel's parameters: a run-time error, reported by the run."""


def signature_of(launch: RecordedLaunch) -> tuple[JITFunction, dict, dict, dict]:
    """(jit function, signature, constexprs, compile options) for one recorded launch."""
    fn, kwargs = unwrap(launch.kernel, launch.kwargs, launch.args)
    params = inspect.signature(fn.fn).parameters
    bound = dict(zip(params, launch.args))
    bound.update({k: v for k, v in kwargs.items() if k in params})
    missing = [n for n, p in params.items() if n not in bound and p.default is inspect.Parameter.empty]
    if missing or len(launch.args) > len(params):
        raise BadLaunch(f"{launch.name} launched with arguments that do not match its parameters "
                        f"(missing: {', '.join(missing) or 'none'})")
    options = {k: v for k, v in kwargs.items() if k in OPTION_KEYS and v is not None}
    signature, constexprs = {}, {}
    for p in fn.params:
        default = params[p.name].default
        value = bound.get(p.name, None if default is inspect.Parameter.empty else default)
        if p.is_constexpr or type_of(value) == "constexpr":
            signature[p.name] = "constexpr"
            constexprs[p.name] = value
        else:
            signature[p.name] = type_of(value)
    return fn, signature, constexprs, options


def alignment_attrs(fn: JITFunction, launch: RecordedLaunch, signature: dict) -> dict:
    """The specialisation Triton's JIT adds to the types: `tt.divisibility = 16` on a pointer whose
    address is a multiple of 16 bytes and an integer that is a multiple of 16 (unless the parameter
    is do_not_specialize[_on_alignment]). The compiler vectorises and pipelines loads by it, so the
    shared memory a tile takes on the GPU depends on it (an fp16 128x128x64 dot at 3 stages:
    65,536 B without, 98,304 B with)."""
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend

    bound = dict(zip(inspect.signature(fn.fn).parameters, launch.args)) | dict(launch.kwargs)
    attrs = {}
    for i, p in enumerate(fn.params):
        if signature.get(p.name) == "constexpr" or p.do_not_specialize or p.name not in bound:
            continue
        try:
            _, key = native_specialize_impl(BaseBackend, bound[p.name], False, True,
                                            not p.do_not_specialize_on_alignment)
        except Exception:  # a value the JIT would refuse: the run reports it
            continue
        if key == "D":
            attrs[(i,)] = [["tt.divisibility", 16]]
    return attrs


def _resource_usage(compiled: Any, arch: int) -> dict:
    """Registers and spills from `ptxas -v`, as Triton's own ptxas reports them."""
    metrics = {"registers": None, "spill_stores": None, "spill_loads": None,
               "shared_bytes": compiled.metadata.shared}
    try:
        from triton.backends.nvidia.compiler import get_ptxas
        ptxas = get_ptxas(arch).path
        with tempfile.TemporaryDirectory() as tmp:
            ptx = Path(tmp) / "k.ptx"
            ptx.write_text(compiled.asm["ptx"])
            arch_name = f"sm_{arch}a" if arch >= 90 else f"sm_{arch}"
            out = subprocess.run([ptxas, "-v", "--gpu-name", arch_name, str(ptx), "-o", str(Path(tmp) / "k.o")],
                                 capture_output=True, text=True, timeout=120).stderr
    except (ImportError, OSError, subprocess.SubprocessError, KeyError) as exc:
        metrics["note"] = f"ptxas unavailable: {exc}"
        return metrics
    if m := re.search(r"Used (\d+) registers", out):
        metrics["registers"] = int(m.group(1))
    if m := re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", out):
        metrics["spill_stores"], metrics["spill_loads"] = int(m.group(1)), int(m.group(2))
    return metrics


def tensor_core_precisions(ptx: str, ttir: str = "") -> tuple[list[str], list[str]]:
    """(mma instructions in the PTX, the reduced operand precisions they use). The mma of an fp32
    dot Triton emulates (TTIR `inputPrecision = tf32x3`) is named by the emulation, and keeps its
    own name only if a plain dot at that precision is there too."""
    instructions = list(dict.fromkeys(MMA.findall(ptx)))
    found = {REDUCED_TYPES[t] for ins in instructions for t in ins.split(".") if t in REDUCED_TYPES}
    dots = {(prec or "ieee", elem) for prec, elem in TTIR_DOT.findall(ttir)}
    plain = set().union({"tf32"} if ("tf32", "f32") in dots else set(), *(PLAIN.get(e, set()) for _, e in dots))
    seen = set(found)
    for emulation in {p for p, e in dots if e == "f32" and p in EMULATIONS}:
        if EMULATIONS[emulation] & seen:
            found = (found - (EMULATIONS[emulation] - plain)) | {emulation}
    return instructions, sorted(found)


def _low_precision(entry: dict, instructions: list[str]) -> str | None:
    low = [p for p in entry["tensor_core_precisions"] if p not in NEAR_FP32]
    if not low:
        return None
    ins = next((i for i in instructions if any(REDUCED_TYPES.get(t) in low for t in i.split("."))),
               next(i for i in instructions if any(t in REDUCED_TYPES for t in i.split("."))))
    return (f"low-precision: {entry['kernel']} uses {ins} (tensor cores at {'/'.join(low)}) "
            f"in a float32 op")


def compile_launches(launches: list[RecordedLaunch], arch: int = 90,
                     float32: bool = False) -> tuple[list[dict], list[str], list[str]]:
    """Compile each distinct launch signature (every autotune config); return (per-kernel metrics, build-error and, for a
    float32 op (`float32`), low-precision reasons, notes)."""
    results, reasons, notes, seen = [], [], [], set()
    target = GPUTarget("cuda", arch, 32)
    for launch in expanded(launches):
        try:
            fn, signature, constexprs, options = signature_of(launch)
        except BadLaunch as exc:
            notes.append(str(exc))
            continue
        except Exception as exc:
            reasons.append(f"build-error: {launch.name}: cannot derive its signature: {exc}")
            continue
        key = (fn.fn.__qualname__, tuple(signature.items()), repr(sorted(constexprs.items())), repr(options))
        if key in seen:  # once per signature, aligned as its first launch (the main case's) is
            continue
        seen.add(key)
        attrs = alignment_attrs(fn, launch, signature)
        try:
            compiled = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs),
                                      target=target, options=options)
        except Exception as exc:  # the GPU compiler's message is the feedback the drafter needs
            reasons.append(f"build-error: {launch.name} does not compile for sm_{arch}: {_first_line(exc)}")
            continue
        entry = {"kernel": launch.name, "arch": f"sm_{arch}", "num_warps": compiled.metadata.num_warps,
                 "num_stages": compiled.metadata.num_stages,
                 "constexprs": {k: repr(v) for k, v in constexprs.items()}}
        instructions, entry["tensor_core_precisions"] = tensor_core_precisions(
            compiled.asm.get("ptx", ""), compiled.asm.get("ttir", ""))
        entry["mma"] = bool(instructions)
        entry.update(_resource_usage(compiled, arch))
        if tmem := getattr(compiled.metadata, "tmem_size", None):
            entry["tmem_columns"] = tmem
        reasons += resources.check(entry, arch)  # over the target's limits: fails at every launch
        results.append(entry)
        if float32 and (reason := _low_precision(entry, instructions)):
            reasons.append(reason)
    return results, reasons, notes


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # Triton's CompilationError puts the source excerpt first and the cause last
    return (lines[-1] if lines else type(exc).__name__)[:300]
