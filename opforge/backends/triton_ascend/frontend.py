"""The Ascend front end, run for real on the launches a candidate recorded (worker side, with
triton-ascend's `triton` first on sys.path).

Per distinct launch signature, as triton-ascend's own `npu` backend compiles it: the kernel's
TTIR (make_ttir), `triton-adapter-opt` down to Linalg/HFusion/HIVM (ttir_to_linalg), then
`bishengir-compile`'s HFusion and HIVM pipeline, which schedules the vector code and plans the
192 KB unified buffer; a tile that does not fit fails there with the compiler's own message
(`ub overflow, requires N bits while 1572864 bits available`); one that fits has the UB it planned
recorded (`required_ub_bits`, from the compiler's memory display). The TTIR is read for the types
A2/A3 cannot compute (dtypes.py). Last, bishengir-compile hands the
module to `hivmc`, the device code generator, which only CANN has: without it the pipeline stops
right there, which is the `frontend-compiled` rung; with it the kernel object is the `compiled` one.
"""
from __future__ import annotations

import functools
import json
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from opforge.backends.triton_ascend import dtypes, toolchain
from opforge.harness.ladder import NOT_REACHED, step

# bishengir-compile's own lines about the missing device code generator: the expected end here.
HIVMC_MISSING = ("Cannot find hivmc", "External hivmc run fails", "Failed to run `hivmc --version`")
NOT_A_CAUSE = ("External hivmc run fails", "Failed to run BiShengHIR pipeline", "Failed to run BiShengIR pipeline")
ERROR_LINE = re.compile(r"^(?:loc\(.*?\):\s*)?error:\s*(.+)$")
TIMEOUT_S = 300
UB_OVERFLOW = re.compile(r"ub overflow, requires (\d+) bits while (\d+) bits available")
MEMORY_DISPLAY = "--enable-memory-display=true"  # writes memory_info_<core>.json: the planned buffers


@dataclass
class PipelineResult:
    """What one bishengir-compile run said: `ok` (device code written), `hivmc-missing` (every pass
    before device codegen ran) or `error` (with the compiler's first real error)."""

    status: str
    message: str | None = None
    notes: list[str] = field(default_factory=list)
    ub_bits: int | None = None


def parse_bishengir(returncode: int, output: str) -> PipelineResult:
    """Read bishengir-compile's combined output (tested against recorded runs)."""
    errors = []
    for line in output.splitlines():
        m = ERROR_LINE.match(line.strip())
        if m and not any(m.group(1).startswith(n) for n in NOT_A_CAUSE):
            errors.append(m.group(1).strip())
    notes = [line.strip()[len("[NOTE] "):] for line in output.splitlines() if line.strip().startswith("[NOTE] ")]
    ub = re.search(r"UB\s+size\s*=\s*(\d+)\s*bits", output) or UB_OVERFLOW.search(output)
    ub_bits = int(ub.group(1)) if ub else None
    if errors:
        return PipelineResult("error", errors[0][:400], notes, ub_bits)
    if returncode == 0:
        return PipelineResult("ok", None, notes, ub_bits)
    if any(marker in output for marker in HIVMC_MISSING):
        return PipelineResult("hivmc-missing", None, notes, ub_bits)
    tail = [line.strip() for line in output.splitlines() if line.strip()]
    return PipelineResult("error", (tail[-1] if tail else f"exit {returncode} with no output")[:400], notes, ub_bits)


@functools.lru_cache(maxsize=1)
def _hivm_flag(bishengir: str) -> str:
    """As triton-ascend picks it: register-based builds take --reg-based, the others HIVM compile."""
    out = subprocess.run([bishengir, "--help"], capture_output=True, text=True, timeout=60).stdout
    return "--reg-based=true" if "reg-based" in out else "--enable-hivm-compile=true"


def bishengir_command(bishengir: str, source: Path, output: Path, target: str, options) -> list[str]:
    """triton-ascend 3.2's command line for A2/A3 parts (linalg_to_bin_enable_npu_compile_A2_A3),
    with the options a plain launch has."""
    cmd = [bishengir, str(source), f"--target={target}"]
    if options.multibuffer is not None:
        cmd.append(f"--enable-auto-multi-buffer={options.multibuffer}")
    if options.enable_auto_bind_sub_block is not None:
        cmd.append(f"--enable-auto-bind-sub-block={options.enable_auto_bind_sub_block}")
    return [*cmd, "--enable-hfusion-compile=true", _hivm_flag(bishengir), "--enable-triton-kernel-compile=true",
            "-o", str(output)]


def run_bishengir(linalg: str, target: str, options, env: dict) -> tuple[PipelineResult, float]:
    from triton.backends.ascend.compiler import _parse_linalg_metadata

    chain, _ = toolchain.cached()
    linalg, _meta = _parse_linalg_metadata(linalg, {})
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="opforge-bishengir-") as tmp:
        src = Path(tmp) / "kernel.ttadapter.mlir"
        src.write_text(linalg)
        cmd = bishengir_command(str(chain.bishengir), src, Path(tmp) / "kernel", target, options)
        try:
            done = subprocess.run([*cmd, MEMORY_DISPLAY], capture_output=True, text=True,
                                  timeout=TIMEOUT_S, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            return PipelineResult("error", f"bishengir-compile ran past {TIMEOUT_S} s"), time.perf_counter() - began
        result = parse_bishengir(done.returncode, done.stdout + "\n" + done.stderr)
        if result.ub_bits is None:
            result.ub_bits = planned_ub_bits(Path(tmp))
    return result, time.perf_counter() - began


def planned_ub_bits(folder: Path) -> int | None:
    """The unified buffer the HIVM pipeline planned, in bits: the end of the furthest UB buffer in
    bishengir-compile's memory display (memory_info_aiv.json / _aic.json in its working folder)."""
    ends = []
    for path in folder.glob("memory_info_*.json"):
        try:
            records = json.loads(path.read_text()).get("Record", [])
        except (OSError, ValueError, AttributeError):
            continue
        for record in records:
            if record.get("scope") == "ub":
                ends += [int(o) + int(b.get("extent", 0)) for b in record.get("memory_info_array", [])
                         for o in b.get("offset", [])]
    return max(ends, default=None)


def lower(fn, signature: dict, constants: dict, target: str):
    """(TTIR module text, Linalg text, options, mix mode) by triton-ascend's own npu stages."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource, make_backend

    backend = make_backend(GPUTarget("npu", target, 0))
    options = backend.parse_options({})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    stages: dict = {}
    backend.add_stages(stages, options)
    src = ASTSource(fn=fn, signature={k: v for k, v in signature.items() if v != "constexpr"}, constants=constants)
    module = src.make_ir(options, backend.get_codegen_implementation(), backend.get_module_map(), context)
    metadata = {"target": GPUTarget("npu", target, 0), **options.__dict__}
    ttir = stages["ttir"](module, metadata)
    ttir_text = str(ttir)
    linalg = stages["ttadapter"](ttir, metadata)
    mix = re.search(r'mix_mode\s*=\s*"([^"]+)"', linalg)
    return ttir_text, linalg, options, mix.group(1) if mix else None


def _adapter_error(exc: subprocess.CalledProcessError) -> str:
    text = (exc.stderr or b"").decode(errors="replace") if isinstance(exc.stderr, bytes) else str(exc.stderr or "")
    for line in text.splitlines():  # an aborted pass says why in an assertion, above its stack dump
        if "Assertion" in line:
            return line.strip()[:300]
    for line in text.splitlines():
        if m := ERROR_LINE.match(line.strip()):
            return m.group(1).strip()[:300]
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return (lines[-1].strip() if lines else f"triton-adapter-opt exited {exc.returncode}")[:300]


def _first_line(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else type(exc).__name__)[:300]


def programs(grid) -> int | None:
    """How many programs a recorded launch asked for (None when the grid cannot be read)."""
    if callable(grid):
        return None
    dims = grid if isinstance(grid, (tuple, list)) else (grid,)
    try:
        total = 1
        for d in dims:
            total *= int(d)
        return total
    except (TypeError, ValueError):
        return None


def grid_findings(launches: list) -> tuple[list[str], list[str]]:
    """(reasons, warnings) about the launches' program counts: Ascend launches at most 65535
    blocks, and programs beyond the vector cores run in waves on the same cores."""
    reasons, warnings, seen = [], [], set()
    cores = toolchain.AI_CORES[toolchain.DEFAULT_TARGET] * toolchain.VECTOR_PER_AI_CORE
    for launch in launches:
        count = programs(launch.grid)
        if count is None or (launch.name, count) in seen:
            continue
        seen.add((launch.name, count))
        if count > toolchain.MAX_PROGRAMS:
            reasons.append(f"grid-too-large: {launch.name} launched {count} programs; {toolchain.GRID_LIMIT}")
        elif count > cores:
            warnings.append(f"ascend-grid: {launch.name} launched {count} programs, more than the {cores} vector "
                            f"cores of {toolchain.DEFAULT_TARGET}: they run in waves (a grid of the core count "
                            f"with a loop over sub-blocks avoids the launch overhead)")
    return reasons, warnings


def compile_launches(launches: list, job: dict, env: dict) -> tuple[list[dict], list[str], list[str], dict]:
    """Lower each distinct launch through the front end: (per-kernel records, reasons, notes, the
    frontend_compile and compile step records)."""
    from opforge.backends.triton import aot

    chain, _ = toolchain.cached()
    target = job.get("npu_target") or toolchain.DEFAULT_TARGET
    hivmc = toolchain.find_hivmc(path=env.get("PATH"))
    kernels, reasons, notes, seen = [], [], [], set()
    began = time.perf_counter()
    for launch in launches:
        try:
            fn, signature, constexprs, _options = aot.signature_of(launch)
        except aot.BadLaunch as exc:
            notes.append(str(exc))
            continue
        except Exception as exc:
            reasons.append(f"build-error: {launch.name}: cannot derive its signature: {exc}")
            continue
        key = (fn.fn.__qualname__, tuple(signature.items()), repr(sorted(constexprs.items())))
        if key in seen:
            continue
        seen.add(key)
        entry = {"kernel": launch.name, "target": target, "constexprs": {k: repr(v) for k, v in constexprs.items()}}
        t0 = time.perf_counter()
        try:
            ttir, linalg, options, entry["mix_mode"] = lower(fn, signature, constexprs, target)
        except subprocess.CalledProcessError as exc:
            reasons.append(f"build-error: {launch.name} fails triton-adapter-opt (Triton-Ascend's lowering): "
                           f"{_adapter_error(exc)}")
            continue
        except Exception as exc:  # the front end's message is what the drafter needs
            reasons.append(f"build-error: {launch.name} does not lower for {target}: {_first_line(exc)}")
            continue
        if refused := dtypes.ttir_findings(launch.name, ttir):  # types the NPU lacks: the front end lets them by
            reasons += refused
            continue
        result, _seconds = run_bishengir(linalg, target, options, env)
        entry.update(frontend_s=round(time.perf_counter() - t0, 3), pipeline=result.status,
                     required_ub_bits=result.ub_bits, ub_available_bits=toolchain.UB_BYTES * 8)
        kernels.append(entry)
        if result.status == "error":
            reasons.append(f"build-error: {launch.name} fails bishengir-compile's HIVM pipeline for {target}: "
                           f"{result.message}")
        notes += [f"{launch.name}: bishengir-compile: {n}" for n in result.notes]
    seconds = time.perf_counter() - began
    front = step("failed" if reasons else "passed", "bishengir-compile", chain.ascendnpu_ir, seconds,
                 reasons[0] if reasons else None)
    if reasons:
        device = step("skipped", "hivmc", None, reason=NOT_REACHED)
    elif not kernels:
        front = step("skipped", "bishengir-compile", chain.ascendnpu_ir, seconds,
                     "forward launched no kernel to compile")
        device = step("skipped", "hivmc", None, reason="forward launched no kernel to compile")
    elif all(k["pipeline"] == "ok" for k in kernels):
        device = step("passed", "hivmc", None, seconds)
    else:
        device = step("skipped", "hivmc", None, reason=toolchain.CANN_REASON if hivmc is None else
                      "hivmc was found but bishengir-compile did not produce device code")
    return kernels, reasons, notes, {"frontend_compile": front, "compile": device}
