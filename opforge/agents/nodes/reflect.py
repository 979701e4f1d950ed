"""reflect: turn each verdict into concise guidance for the next draft, and keep the best candidate.

The feedback quotes the harness's exact reasons (build errors, nvcc's with the offending line,
mismatch numbers with positions and tolerances, the CUDA emulator's race, deadlock and
out-of-bounds findings, anti-cheat findings) and adds what they suggest: failing variants, what
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
_REASON_CODE = re.compile(r"(?:^|: )(" + "|".join(map(re.escape, REASON_HINTS)) + r"): ")


def feedback_text(summary: dict, backend: str = "triton") -> str:
    if summary["correct"]:
        return _success_text(summary)
    lines = [f"INCORRECT at stage {summary['stage']}:"] + [f"- {reason}" for reason in summary["reasons"]]
    failing = [v for v in summary.get("variants", []) if not v.get("passed", True)]
    if failing:
        lines.append("Failing input shapes: " + "; ".join(str(v["shapes"]) for v in failing))
    found = map(_REASON_CODE.search, summary["reasons"]) if backend == "cuda" else ()
    codes = dict.fromkeys(m.group(1) for m in found if m)
    hints = [REASON_HINTS[code] for code in codes] or [
        BACKEND_HINTS.get((backend, summary["stage"])) or HINTS.get(summary["stage"])]
    lines += [hint for hint in hints if hint]
    return "\n".join(lines)


def _success_text(summary: dict) -> str:
    lines = ["CORRECT: every variant and anti-cheat check passed."]
    timings = summary.get("timings")
    if timings:
        lines.append(f"Time {timings['kernel_ms']:.4f} ms: {timings['speedup_eager']:.2f}x eager"
                     + (f", {timings['speedup_compile']:.2f}x torch.compile" if timings.get("speedup_compile") else ""))
    for kernel in (summary.get("build") or {}).get("kernels", []):
        spills = kernel.get("spill_stores") or 0
        shape = f"{kernel['num_warps']} warps" if "num_warps" in kernel else f"{kernel.get('shared_bytes') or 0} bytes shared"
        lines.append(f"{kernel['kernel']}: {kernel['registers']} registers, {shape}"
                     + (f", {spills} bytes spilled: use smaller blocks" if spills else ""))
    return "\n".join(lines)


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
