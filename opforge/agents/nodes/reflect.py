"""reflect: turn each verdict into concise guidance for the next draft, and keep the best candidate.

The feedback quotes the harness's exact reasons (build errors, nvcc's with the offending line,
mismatch numbers with positions and tolerances, the CUDA emulator's race, deadlock and
out-of-bounds findings, Triton-Ascend's unified-buffer, grid and lowering findings, anti-cheat findings) and adds what they suggest: failing variants, what
to look for, spills, speedups. The best is the correct candidate with the highest speedup over eager where timed,
else the first correct one."""
from __future__ import annotations

from langgraph.runtime import Runtime

from opforge.backends import DEFAULT, describe
from opforge.agents.state import RunContext, RunState
from opforge.registry.levels import failure_label

# Keyed by the check that failed inside the failed step (harness/ladder.py CHECKS).
HINTS = {
    "build": "It ran under the interpreter but does not compile for the GPU: fix the construct named above.",
    "rules": "The harness rejected the source before running it: remove what the reason names.",
    "anticheat": "The numbers may match but the kernel breaks the rules: only allocation, views and kernel "
                 "launches in forward; every output element written by a kernel; no caching; no input writes.",
    "compare": "The kernel runs but computes wrong values: check masks for ragged edges, the reduction's "
               "identity value, strides, and accumulation precision.",
    "run": "The kernel crashed or timed out: check launch arguments against the kernel's parameters and "
           "loop bounds.",
}
def feedback_text(summary: dict, backend: str = DEFAULT) -> str:
    if summary["correct"]:
        return _success_text(summary)
    check = summary.get("failed_check")
    head = f"INCORRECT: {failure_label(summary['failed_step'], check)}:" if summary.get("failed_step") else \
        "NOT VERIFIABLE HERE: no step failed, but none that checks the numbers could run:"
    lines = [head] + [f"- {reason}" for reason in summary["reasons"]]
    failing = [v for v in summary.get("variants", []) if not v.get("passed", True)]
    if failing:
        lines.append("Failing input shapes: " + "; ".join(str(v["shapes"]) for v in failing))
    plugin = describe(backend)
    build_hint = plugin.build_hint if check == "build" else None
    hints = plugin.reason_hints(summary["reasons"]) or [build_hint or HINTS.get(check or "")]
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
                         "correct": summary["correct"], "failed_step": summary["failed_step"],
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
