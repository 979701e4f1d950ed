"""The dynamic guards the worker puts around a candidate's forward, tested in-process."""
from __future__ import annotations

import subprocess
import sys
import threading
import time

import torch

from opforge.harness import guards


def test_forward_guard_allows_allocation_views_and_copies_only():
    guard = guards.ForwardGuard()
    x = torch.randn(4, 8)
    with guard:
        out = torch.empty_like(x)
        x.view(8, 4).transpose(0, 1).contiguous()
        x.reshape(-1)[:3]
    assert guard.compute == {}
    assert guards.count_sentinel(out) == out.numel()  # allocations are filled with the sentinel
    with guard:
        torch.exp(x) + 1
    assert set(guard.compute) == {"aten.exp", "aten.add"}


def test_forward_guard_reports_narrowing_casts_only():
    guard = guards.ForwardGuard()
    x = torch.randn(4)
    with guard:
        x.double()
        x.to(torch.float32)
    assert guard.downcasts == []
    with guard:
        x.half()
    assert guard.downcasts == ["float32 -> float16"]


def _launch_like(work):
    """Stands for Triton's runtime: a launch frame, then library code doing `work` below it."""
    import sys

    guards.ACCUSED.launch_frames.append(sys._getframe())
    try:
        return work()
    finally:
        guards.ACCUSED.launch_frames.pop()


def test_inside_a_launch_only_the_candidates_own_code_counts(tmp_path):
    """Triton's own work during a launch is not the candidate's; a callable of the candidate's
    (a grid, a hook) that Triton calls during the launch is, however deep it runs."""
    hook = tmp_path / "candidate_hook.py"
    hook.write_text("import torch\n\ndef hook():\n    return torch.randn(3).exp()\n")
    namespace: dict = {}
    exec(compile(hook.read_text(), str(hook), "exec"), namespace)
    guards.ACCUSED.files.add(str(hook))
    from opforge.harness.checker import Trial

    guard = guards.ForwardGuard()
    try:
        with guard, Trial():
            _launch_like(lambda: torch.randn(3).exp())  # library code: not counted
            assert guard.compute == {}
            _launch_like(namespace["hook"])  # the candidate's hook: counted
    finally:
        guards.ACCUSED.files.discard(str(hook))
    assert guard.compute["aten.exp inside a launch (grid or hook)"] == 1


def test_sentinel_counts_exactly_the_unwritten_elements():
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        t = torch.empty(10, dtype=dtype)
        guards.fill_sentinel(t)
        t[:3] = float("nan")  # a NaN computed by a kernel is not the sentinel
        t[3:5] = 1.0
        assert guards.count_sentinel(t) == 5, dtype


def test_module_snapshot_notices_patched_torch_functions():
    snapshot = guards.ModuleSnapshot()
    original = torch.allclose
    try:
        torch.allclose = lambda *a, **k: True
        assert "torch.allclose" in snapshot.changes()
    finally:
        torch.allclose = original
    assert snapshot.changes() == []


def test_module_snapshot_notices_patched_timers():
    snapshot = guards.ModuleSnapshot()
    original = time.perf_counter
    try:
        time.perf_counter = lambda: 0.0
        assert "time.perf_counter" in snapshot.changes()
    finally:
        time.perf_counter = original


def test_threads_and_child_processes_are_seen():
    before = guards.live_threads()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert guards.live_threads() - before
    finally:
        stop.set()
        thread.join()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in guards.child_processes()
    finally:
        child.kill()
        child.wait()
    assert child.pid not in guards.child_processes()


def test_launch_log_records_and_can_skip_launches():
    import triton.language as tl  # noqa: F401  (interpreter-independent: we only use the hook)
    from triton.runtime.jit import KernelInterface

    class Fake(KernelInterface):
        ran = 0

        def run(self, *args, grid, warmup, **kwargs):
            Fake.ran += 1

    fake = Fake()
    with guards.LaunchLog() as log:
        fake[(1,)](1, 2, BLOCK=4)
    with guards.LaunchLog(noop=True) as skipped:
        fake[(1,)](1, 2)
    assert Fake.ran == 1
    assert len(log.launches) == 1 and log.launches[0].kwargs == {"BLOCK": 4}
    assert len(skipped.launches) == 1
    assert KernelInterface.__getitem__ is not None and fake[(1,)] is not None  # hook restored
