"""GPU timing: the candidate in its own process (`bench_candidate`), the reference's eager and
`torch.compile` baselines in the judge's (`profile_reference`), in the same verification.

Uses triton.testing.do_bench: it flushes L2 between runs (writes a 256 MB buffer), warms up for
25 ms and reports the median of ~100 ms worth of timed runs from CUDA events. What is timed is
also checked: every timed call's launches are counted, and at secret call numbers a fresh input
(new values, or the main input perturbed inside with its first and last elements kept) replaces
the main one and a few main-input calls are sampled; those outputs go back to the judge, which
compares each with the reference. A kernel that stops launching or replays a memoised result
during the benchmark fails. Called only on a GPU; without one the verdict's timings are null and
say why (never a made-up number).
"""
from __future__ import annotations

import random
from typing import Any

import torch

from opforge.harness.hardware import GPU_DEVICE

GPU_TIMER = "triton.testing.do_bench"  # times every GPU backend's kernels (the Triton library's bench loop)
METHOD = f"{GPU_TIMER} median (L2 flushed, 25 ms warm-up, 100 ms of runs)"


def timer_tool(device: str) -> tuple[str, str | None]:
    """The profile step's tool and version on `device` (the distribution of a module is its top package)."""
    from opforge.harness.plugin import dist_version

    if device == "npu":
        return "torch.npu events", dist_version("torch_npu")
    return GPU_TIMER, dist_version(GPU_TIMER.partition(".")[0])


def _bench(fn, device: str = GPU_DEVICE) -> float:
    if device == "npu":
        return _bench_events(fn, torch.npu)
    import triton.testing

    with torch.no_grad():
        return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def _bench_events(fn, accel, warmup_ms: float = 25.0, rep_ms: float = 100.0) -> float:
    """do_bench's method on a device whose events Triton's own timer may not know (torch_npu's
    `torch.npu`): the cache flushed with a 256 MB write before each run, the median of event-timed
    runs filling `rep_ms` after `warmup_ms` of warm-up."""
    flush = torch.empty(64 << 20, dtype=torch.int32, device=accel.current_device())
    with torch.no_grad():
        fn()
        accel.synchronize()
        start, end = accel.Event(enable_timing=True), accel.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            fn()
        end.record()
        accel.synchronize()
        estimate = max(start.elapsed_time(end) / 5, 1e-3)
        for _ in range(max(1, int(warmup_ms / estimate))):
            fn()
        times = []
        for _ in range(max(1, int(rep_ms / estimate))):
            flush.zero_()
            start, end = accel.Event(enable_timing=True), accel.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            accel.synchronize()
            times.append(start.elapsed_time(end))
    return float(sorted(times)[len(times) // 2])


def bench_candidate(session: Any, bench: dict) -> tuple[dict, list]:
    """Time the candidate on the main case; return (report, kept outputs) where each kept output
    is matched to its case in `report["kept"]`. `session` is the checker's Session: its case_inputs,
    copy_inputs, timed_call and cpu_copies are all the timing needs of the candidate's side."""
    main, fresh = session.case_inputs(bench["case"]), [session.case_inputs(i) for i in bench["fresh"]]
    rng = random.Random(bench["secret"])
    swaps = dict(zip(sorted(rng.sample(range(3, 400), len(fresh))), range(len(fresh))))
    samples = set(rng.sample(range(3, 400), bench.get("samples", 4)))
    state = {"n": 0, "launches": [], "kept": [], "outputs": []}
    inputs = session.copy_inputs(main)

    def call():
        n = state["n"]
        state["n"] += 1
        args = session.copy_inputs(fresh[swaps[n]]) if n in swaps else inputs
        out, launches = session.timed_call(args)
        state["launches"].append(launches)
        if n in swaps or n in samples:
            state["kept"].append(bench["fresh"][swaps[n]] if n in swaps else bench["case"])
            state["outputs"].append(session.cpu_copies(out))
        return out

    kernel_ms = _bench(call, session.device)
    launches = state["launches"]
    report = {"kernel_ms": kernel_ms, "calls": len(launches), "kept": state["kept"],
              "launches_min": min(launches, default=0), "launches_max": max(launches, default=0),
              "method": METHOD}
    return report, state["outputs"]


def profile_reference(ref_model: Any, inputs: list) -> dict:
    """Eager and torch.compile medians of the reference, in the judge's process."""
    device = next((x.device.type for x in inputs if isinstance(x, torch.Tensor)), GPU_DEVICE)
    eager_ms = _bench(lambda: ref_model(*inputs), device)
    compile_ms, note = None, None
    try:
        compiled = torch.compile(ref_model)
        with torch.no_grad():
            compiled(*inputs)
        compile_ms = _bench(lambda: compiled(*inputs), device)
    except Exception as exc:  # torch.compile can fail on exotic references; eager still stands
        note = f"torch.compile baseline failed: {type(exc).__name__}: {str(exc)[:200]}"
    return {"eager_ms": eager_ms, "compile_ms": compile_ms, "note": note}


def timings(kernel_ms: float, reference: dict) -> dict:
    eager_ms, compile_ms = reference["eager_ms"], reference["compile_ms"]
    return {
        "kernel_ms": kernel_ms,
        "eager_ms": eager_ms,
        "compile_ms": compile_ms,
        "speedup_eager": eager_ms / kernel_ms if kernel_ms else None,
        "speedup_compile": compile_ms / kernel_ms if kernel_ms and compile_ms else None,
        "method": METHOD,
        "note": reference["note"],
    }
