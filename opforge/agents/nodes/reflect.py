"""reflect: turn each verdict into concise guidance for the next draft, and keep the best candidate.

The feedback quotes the harness's exact reasons (build errors, nvcc's with the offending line,
mismatch numbers with positions and tolerances, the CUDA emulator's race, deadlock and
out-of-bounds findings, Triton-Ascend's unified-buffer, grid and lowering findings, anti-cheat findings) and adds what they suggest: failing variants, what
to look for, spills, speedups. The best is the correct candidate with the highest speedup over eager where timed,
else the first correct one."""
from __future__ import annotations

import re

from langgraph.runtime import Runtime

from opforge.agents.state import RunContext, RunState

HINTS = {
    "build": "It ran under the interpreter but does not compile for the GPU: fix the construct named above.",
    "static": "The harness rejected the source before running it: remove what the reason names.",
    "anticheat": "The numbers may match but the kernel breaks the rules: only allocation, views and kernel "
                 "launches in forward; every output element written by a kernel; no caching; no input writes.",
    "compare": "The kernel runs but computes wrong values: check masks for ragged edges, the reduction's "
               "identity value, strides, and accumulation precision.",
    "run": "The kernel crashed or timed out: check launch arguments against the kernel's parameters and "
           "loop bounds.",
}
# Where a backend's stage means something else: a CUDA build error is nvcc's, not the GPU compiler
# rejecting what an interpreter ran.
BACKEND_HINTS = {
    ("cuda", "build"): "nvcc rejected CUDA_SRC: fix the line it names (the error quotes it) and keep the "
                       "extern \"C\" launchers' signatures.",
    ("triton_ascend", "build"): "Huawei's front end (triton-adapter-opt, then bishengir-compile) rejected a "
                                "launch before anything ran: fix the construct its message names.",
}
# The CUDA emulator's findings, by the code its one-line reason starts with (CUDA runs only): each
# says what to look for, in place of the stage's hint.
REASON_HINTS = {
    "race": "The output depends on the thread schedule: put __syncthreads() between shared-memory writes "
            "and other threads' reads (and before the buffer is reused), and never let two threads write "
            "the same element; float atomics are order-dependent.",
    "deadlock": "Some threads never reach the barrier or shuffle the others wait at: no __syncthreads() or "
                "__shfl*_sync inside a branch only some threads take or after an early return; a full mask "
                "0xffffffff needs all 32 lanes, so use a block size that is a multiple of 32.",
    "out-of-bounds": "A kernel touched memory outside a buffer: bounds-check every index (rows or columns "
                     "shorter than the block, the last partial block), use int64 offsets, and size shared "
                     "arrays for the block size the launcher uses.",
    "unsupported": "The CPU emulator cannot run this construct (inline asm, mma/wmma/wgmma, cp.async, TMA, "
                   "clusters, grid sync), so the kernel cannot be verified here: write it in plain CUDA C++.",
    "step-limit": "A kernel never finished in the emulator: check loop bounds and strides (an index that never "
                  "reaches its bound, a grid-stride loop with stride 0).",
    "emu-build": "g++ could not build CUDA_SRC for the emulator: fix the line it names.",
    "const-write": "A kernel wrote into a buffer its launcher takes as const: write outputs only through "
                   "non-const pointers and never cast const away.",
    "arguments": "forward called a launcher with the wrong arguments: pass exactly its parameters but the "
                 "stream, tensors of the pointee's dtype for pointers and Python numbers for scalars.",
}
# Triton-Ascend's findings (static checks, the front end's messages as the verdict quotes them), by a
# phrase anywhere in the reason: the leftmost phrase of a reason picks its hint.
ASCEND_REASON_HINTS = {
    "ub overflow": "The kernel's live tiles do not fit the 192 KB unified buffer (multi-buffering doubles the "
                   "loads): halve BLOCK (or SUB_M), cap it with a constant instead of next_power_of_2 of a "
                   "run-time length, and loop over sub-blocks of long rows, storing each before the next.",
    "grid-too-large": "An Ascend launch takes at most 65535 programs: launch one program per vector core "
                      "(40) and loop inside the kernel, for i in tl.range(tl.program_id(0), n, tl.num_programs(0)).",
    "ascend-unsupported": "Ascend has no PTX and no CUDA device library: drop inline asm and tl.extra.cuda, "
                          "write it with tl ops (tl.exp, tl.sqrt, tl.math.*).",
    "fails triton-adapter-opt": "triton-adapter-opt could not analyse a pointer or mask: keep every pointer a "
                                "base plus affine offsets (no tl.where between two pointers: load both masked "
                                "and select the values), and prefer strides to % or loaded indices.",
    "does not lower for": "Triton-Ascend's lowering refused a construct: no fp64 anywhere (compute in fp32), "
                          "only Triton 3.2 APIs, no GPU-only ops.",
}
_REASON_CODES = {
    "cuda": re.compile(r"(?:^|: )(" + "|".join(map(re.escape, REASON_HINTS)) + r"): "),
    "triton_ascend": re.compile("(" + "|".join(map(re.escape, ASCEND_REASON_HINTS)) + ")"),
}
_HINTS_BY_CODE = {"cuda": REASON_HINTS, "triton_ascend": ASCEND_REASON_HINTS}


def feedback_text(summary: dict, backend: str = "triton") -> str:
    if summary["correct"]:
        return _success_text(summary)
    lines = [f"INCORRECT at stage {summary['stage']}:"] + [f"- {reason}" for reason in summary["reasons"]]
    failing = [v for v in summary.get("variants", []) if not v.get("passed", True)]
    if failing:
        lines.append("Failing input shapes: " + "; ".join(str(v["shapes"]) for v in failing))
    pattern = _REASON_CODES.get(backend)
    found = map(pattern.search, summary["reasons"]) if pattern else ()
    codes = dict.fromkeys(m.group(1) for m in found if m)
    hints = [_HINTS_BY_CODE[backend][code] for code in codes] or [
        BACKEND_HINTS.get((backend, summary["stage"])) or HINTS.get(summary["stage"])]
    lines += [hint for hint in hints if hint]
    return "\n".join(lines)


def _success_text(summary: dict) -> str:
    lines = ["CORRECT: every variant and anti-cheat check passed."]
    timings = summary.get("timings")
    if timings:
        lines.append(f"Time {timings['kernel_ms']:.4f} ms: {timings['speedup_eager']:.2f}x eager"
                     + (f", {timings['speedup_compile']:.2f}x torch.compile" if timings.get("speedup_compile") else ""))
    lines += [_kernel_line(k) for k in (summary.get("build") or {}).get("kernels", [])]
    return "\n".join(lines)


def _kernel_line(kernel: dict) -> str:
    if "registers" not in kernel:  # Triton-Ascend: the front end reports its pipeline, not registers
        ub = kernel.get("required_ub_bits")
        return (f"{kernel['kernel']}: {kernel.get('mix_mode') or 'unknown'} kernel for {kernel.get('target')}, "
                f"bishengir-compile: {kernel.get('pipeline')}" + (f", {ub // 8} bytes of unified buffer" if ub else ""))
    spills = kernel.get("spill_stores") or 0
    shape = f"{kernel['num_warps']} warps" if "num_warps" in kernel else f"{kernel.get('shared_bytes') or 0} bytes shared"
    return (f"{kernel['kernel']}: {kernel['registers']} registers, {shape}"
            + (f", {spills} bytes spilled: use smaller blocks" if spills else ""))


def score(summary: dict) -> float:
    """Higher is better: speedup over eager when timed, else 1.0 for any correct candidate."""
    if not summary["correct"]:
        return 0.0
    timings = summary.get("timings") or {}
    return float(timings.get("speedup_eager") or 1.0)


def reflect(state: RunState, runtime: Runtime[RunContext]) -> dict:
    ctx = runtime.context
    best = state.get("best")
    attempts = []
    sources = {c: ctx.registry.get_candidate(c).source for c in (s["candidate_id"] for s in state.get("evaluated", []))}
    for summary in state.get("evaluated", []):
        attempts.append({"candidate_id": summary["candidate_id"], "source": sources[summary["candidate_id"]],
                         "correct": summary["correct"], "stage": summary["stage"],
                         "feedback": feedback_text(summary, ctx.backend), "speedup": (summary.get("timings") or {}).get("speedup_eager")})
        if summary["correct"] and (best is None or score(summary) > best["score"]):
            best = {"candidate_id": summary["candidate_id"], "score": score(summary), "round": state.get("round", 0),
                    "kernel_ms": (summary.get("timings") or {}).get("kernel_ms")}
    if best:
        ctx.registry.update_run(state["run_key"], best_candidate_id=best["candidate_id"])
    ctx.emit({"node": "reflect", "round": state.get("round", 0), "message":
              f"best so far: candidate #{best['candidate_id']} (score {best['score']:.2f})" if best
              else "no correct candidate yet"})
    return {"attempts": attempts, "best": best, "evaluated": [], "round_best": [best["score"] if best else 0.0]}
