"""What a CPU run will cost, estimated from the reference before any kernel exists, so a spec is
shrunk until its whole verification fits a time budget (harness/spec.py), not only a memory cap.

Triton's interpreter runs a launch's programs one after another, each tl op a NumPy call on a whole
tile: its time grows with the elements a kernel reads and writes and with the multiply-adds of its
dots. Per call of one input list, on meta tensors (nothing allocated): its inputs' and outputs'
elements, and the reference's FLOPs (torch's FlopCounterMode: matmuls, convolutions, attention),
a convolution's weighted CONV_WEIGHT times a matmul's (an implicit GEMM gathers its tiles). The
whole run is that call times the plan's calls in main-case units (judge.py: every trial of every
variant, the larger case per size constant, the stress and repeated calls on the smallest case),
plus the fixed cost of a verification (the build, the judge's preparation, process starts).

The per-backend constants (the plugin's `cpu_cost`) are measured for the expert's kernels with the CPU run's memory model on, on a
2-core machine (benchmarks/cpu_cost.py prints measured against estimated); a kernel far slower
than the estimate still finishes (the sandbox's timeout bounds it), and the verdict records the
measured seconds of its first call beside the estimate.
"""
from __future__ import annotations

import os

BUDGET_S = float(os.environ.get("OPFORGE_CPU_BUDGET_S", 60))
CONV_WEIGHT = 4.0
FIXED_S = 10.0
TRIALS = 5  # VerifyOptions.trials' default
STRESS_CALLS = 15  # scaled, zeros and layout cases, 8 repeated and 2 perturbed calls: on the smallest case
LARGER_CALLS = 1.25  # per size constant: judge.LARGER_BUDGET x the main case


def flops(counter) -> float:
    """A FlopCounterMode's count, convolutions weighted by CONV_WEIGHT."""
    total = 0.0
    for op, count in counter.get_flop_counts().get("Global", {}).items():
        total += count * (CONV_WEIGHT if "conv" in str(op) else 1.0)
    return total


def model(backend: str | None) -> tuple[float, float] | None:
    """A backend's (seconds per element, seconds per FLOP) of one interpreted call (its plugin's
    `cpu_cost`); None for a backend without one (the CUDA and AscendC emulators: sized by elements)."""
    from opforge.backends import BACKENDS

    entry = BACKENDS.get(backend)
    return getattr(entry.plugin(), "cpu_cost", None) if entry is not None and entry.module else None


def call_seconds(backend: str, elements: int, flops: float) -> float | None:
    found = model(backend)
    return None if found is None else found[0] * elements + found[1] * flops


def estimate_s(backend: str, per_list: list[tuple[int, float]] | None, size_keys: int,
               trials: int = TRIALS) -> float | None:
    """Seconds the whole CPU verification is expected to take, or None without a model or a measure."""
    if not per_list or model(backend) is None:
        return None
    calls = [call_seconds(backend, e, f) for e, f in per_list]
    return FIXED_S + trials * sum(calls) + LARGER_CALLS * size_keys * calls[0] + STRESS_CALLS * min(calls)


def measured(calls: list) -> dict:
    """The seconds the candidate's calls took by its worker's clock: the first, and all of them."""
    seconds = [float(c.get("seconds") or 0) for c in calls if isinstance(c, dict)]
    return {"first_call": round(seconds[0], 3) if seconds else None, "calls": round(sum(seconds), 2)}
