"""What a CPU run will cost, estimated from the reference before any kernel exists, so a spec is
shrunk until its whole verification fits a time budget (harness/spec.py), not only a memory cap.

Triton's interpreter runs a launch's programs one after another, each tl op a NumPy call on a whole
tile: its time grows with the elements a kernel reads and writes and with the multiply-adds of its
dots. Per call of one input list, on meta tensors (nothing allocated): its inputs' and outputs'
elements, and the reference's FLOPs (torch's FlopCounterMode: matmuls, attention). A convolution
is counted by the tile steps an implicit GEMM runs (conv_steps), not its FLOPs: the interpreter's
time there is its tile ops, about the same for a tile of 16 output channels as for 64, so FLOPs
overestimated a narrow conv several times and missed that a strided transposed one ran every tap
(now one launch per stride phase: each phase's own taps are counted); a step is TILE_FLOPS
FLOP-equivalents, weighted CONV_WEIGHT (fitted on the workers of 3-D conv verifications, #36:
whole-run calls 0.25-1.06 s each at load ~4). The
whole run is that call times the plan's calls in main-case units (judge.py: every trial of every
variant, the larger case per size constant, the stress and repeated calls on the smallest case),
plus the fixed cost of a verification (the build, the judge's preparation, process starts).

The per-backend constants (the plugin's `cpu_cost`) are measured for the expert's kernels with the CPU run's memory model on, on a
2-core machine (benchmarks/cpu_cost.py prints measured against estimated); a kernel far slower
than the estimate still finishes (the sandbox's timeout bounds it), and the verdict records the
measured seconds of its first call beside the estimate.
"""
from __future__ import annotations

import itertools
import os

import torch
from torch.utils._python_dispatch import TorchDispatchMode

BUDGET_S = float(os.environ.get("OPFORGE_CPU_BUDGET_S", 60))
CONV_WEIGHT = 0.3
TILE_FLOPS = 2 * 512 * 64 * 16  # one K step of a [512, 16] output tile over 64 taps, in FLOP-equivalents
SETUP_STEPS = 1  # a program's index set-up, bias, epilogue and store, in K steps (fitted: 4 ms vs 7 ms a step)
FIXED_S = 10.0
TRIALS = 5  # VerifyOptions.trials' default
STRESS_CALLS = 15  # scaled, zeros and layout cases, 8 repeated and 2 perturbed calls: on the smallest case
LARGER_CALLS = 1.25  # per size constant: judge.LARGER_BUDGET x the main case


def flops(counter, conv_steps: float = 0.0) -> float:
    """A FlopCounterMode's count less its convolutions, plus `conv_steps` (ConvSteps) in FLOP-equivalents."""
    total = sum(count for op, count in counter.get_flop_counts().get("Global", {}).items() if "conv" not in str(op))
    return total + CONV_WEIGHT * TILE_FLOPS * conv_steps


def _tiles(size: float, block: int) -> int:
    return -(-int(size) // block)


def _phases(out: int, taps: int, stride: int, pad: int, dil: int) -> list[tuple[int, int]]:
    """A transposed dim's stride phases: (outputs, taps) of each residue (emit/conv.py's launcher)."""
    found = []
    for res in range(min(stride, out)):
        live = sum(1 for k in range(taps) if (res + pad - k * dil) % stride == 0)
        found.append((_tiles(out - res, stride), live))
    return found


def conv_steps(x: tuple, w: tuple, out: tuple, stride, pad, dil, transposed: bool, groups: int) -> float:
    """K steps (plus each program's set-up) of the expert's convolution kernels on these shapes, at
    their first tiles (emit/conv.py: BLOCK_N the power of two covering a group's output channels,
    16 to 64; BLOCK_M 512, 256 at 64 or in 3-D; BLOCK_K 16/32/64 by K, 32 at most in 3-D): the implicit GEMM runs
    cdiv(M, BLOCK_M) x cdiv(N, BLOCK_N) x groups programs of cdiv(K, BLOCK_K) steps, per stride
    phase when transposed; a narrow-group (direct) one cdiv(M, 512) x cdiv(C_out, BLOCK_N) programs
    of one step per (input channel, tap)."""
    rank, cin_g, n = len(out) - 2, x[1] // groups, out[1] // groups
    block_n = min(64, max(16, 1 << max(0, n - 1).bit_length()))
    if not transposed and groups > 1 and n < 16:  # the direct kernel (conv plan's DIRECT_BELOW)
        taps = 1
        for d in range(rank):
            taps *= w[2 + d]
        return _tiles(x[0] * _prod(out[2:]), 512) * _tiles(out[1], block_n) * (SETUP_STEPS + cin_g * taps)
    dims = [_phases(out[2 + d], w[2 + d], stride[d], pad[d], dil[d]) if transposed else [(out[2 + d], w[2 + d])]
            for d in range(rank)]
    block_m = 512 if block_n <= 32 and rank < 3 else 256
    total = 0.0
    for phase in itertools.product(*dims):
        k = cin_g * _prod(t for _, t in phase)
        block_k = 16 if k <= 16 else 32 if k <= 32 or rank >= 3 else 64
        programs = _tiles(x[0] * _prod(c for c, _ in phase), block_m) * _tiles(n, block_n) * groups
        total += programs * (SETUP_STEPS + _tiles(k, block_k))
    return total


def _prod(values) -> int:
    result = 1
    for v in values:
        result *= int(v)
    return result


class ConvSteps(TorchDispatchMode):
    """Counts conv_steps over the aten.convolution calls run under it (meta tensors)."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = 0.0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten.convolution.default:
            x, w, _bias, stride, pad, dil, transposed, _opad, groups = args[:9]
            rank = x.dim() - 2
            per = [(list(v) * rank)[:rank] if len(v) == 1 else list(v) for v in (stride, pad, dil)]
            self.steps += conv_steps(tuple(x.shape), tuple(w.shape), tuple(out.shape), *per, bool(transposed), groups)
        return out


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
