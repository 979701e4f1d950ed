"""The dynamic guards the worker puts around a candidate's forward, tested in-process."""
from __future__ import annotations

import json
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


DYNAMO_LATER = """
import sys, torch
from opforge.harness import guards
with guards.ForwardGuard():  # the guard's first op does not import Dynamo (torch's wrapper would)
    torch.ones(3) + 1
snapshot = guards.ModuleSnapshot()
assert "torch._dynamo" not in sys.modules, "imported up front"
import torch._dynamo  # what torch's custom ops and Python decompositions do on a first call
assert torch.manual_seed is not torch.random.manual_seed  # Dynamo's import did rebind it
print(snapshot.changes())
torch.manual_seed = torch._disable_dynamo(lambda seed: None)  # torch's kind of wrapper, around another function
print(snapshot.changes())
"""


def test_module_snapshot_allows_dynamos_own_rebinding_and_nothing_like_it():
    """The worker no longer imports torch._dynamo before the candidate runs (1.5 s a job): a later
    import, which wraps torch.manual_seed in torch's own wrapper around the same function, is no
    patch; the same kind of wrapper around anything else is."""
    done = subprocess.run([sys.executable, "-c", DYNAMO_LATER], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "['torch.manual_seed']"]


def test_module_snapshot_notices_a_replacement_that_took_the_originals_id():
    """Deleting a watched function frees it; a new function then often gets its address, and so
    its id. The snapshot holds the originals, so a replacement can never share an id with one."""
    def victim(x):
        return x
    torch.opforge_victim = victim
    del victim
    snapshot = guards.ModuleSnapshot()
    old_id = id(torch.opforge_victim)
    try:
        del torch.opforge_victim
        replacement, tried = None, []
        for _ in range(200_000):  # without the hold, the freed address is handed out again (kept misses fill the pools)
            def candidate(x):
                return x + 1
            if id(candidate) == old_id:
                replacement = candidate
                break
            tried.append(candidate)
        del tried
        assert replacement is None, "a new function took a watched object's id"
        torch.opforge_victim = lambda x: x + 1
        assert snapshot.changes() == ["torch.opforge_victim"]
    finally:
        vars(torch).pop("opforge_victim", None)


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
    original = KernelInterface.__getitem__
    with guards.LaunchLog() as log:
        assert KernelInterface.__getitem__ is not original  # launches go through the log's hook
        fake[(1,)](1, 2, BLOCK=4)
    with guards.LaunchLog(noop=True) as skipped:
        fake[(1,)](1, 2)
    assert Fake.ran == 1
    assert len(log.launches) == 1 and log.launches[0].kwargs == {"BLOCK": 4}
    assert len(skipped.launches) == 1
    assert KernelInterface.__getitem__ is original  # hook restored
    fake[(1,)](3)
    assert Fake.ran == 2 and len(log.launches) == 1  # a launch after the block is not logged


def test_module_snapshot_notices_added_and_removed_attributes():
    snapshot = guards.ModuleSnapshot()
    try:
        torch.Tensor.opforge_probe = True
        assert snapshot.changes() == ["torch.Tensor.opforge_probe (added)"]
    finally:
        del torch.Tensor.opforge_probe
    gelu = torch.nn.functional.gelu
    try:
        del torch.nn.functional.gelu
        assert snapshot.changes() == ["torch.nn.functional.gelu"]
    finally:
        torch.nn.functional.gelu = gelu
    assert snapshot.changes() == []


def test_global_state_changes_name_the_setting_and_both_values():
    before = guards.global_state()
    assert before["deterministic_algorithms"] is False and before["default_dtype"] == "torch.float32"
    try:
        torch.set_deterministic_debug_mode("warn")
        torch.set_default_dtype(torch.float64)
        changes = guards.state_changes(before, guards.global_state())
    finally:
        torch.set_deterministic_debug_mode("default")
        torch.set_default_dtype(torch.float32)
    assert changes == ["default_dtype 'torch.float32' -> 'torch.float64'", "deterministic_algorithms False -> True"]
    assert guards.state_changes(before, guards.global_state()) == []


TRIPWIRE_PROBE = r'''
import json, os, subprocess, sys, threading
import torch
from opforge.harness import guards
from opforge.harness.checker import Trial

guards.install_tripwires()
path = sys.argv[1]
namespace = {}
exec(compile(open(path).read(), path, "exec"), namespace)
guards.ACCUSED.files.add(path)
found = {}
for active in (False, True):
    for name, fn in sorted(namespace.items()):
        if not name.startswith("probe_"):
            continue
        try:
            if active:
                with Trial():
                    fn()
            else:
                fn()
            outcome = "ran"
        except RuntimeError as exc:
            outcome = str(exc)
        found[f"{name} {'trial' if active else 'idle'}"] = [outcome, guards.ACCUSED.take_events()]
print(json.dumps(found))
'''
CANDIDATE = '''
import os, subprocess, threading
import torch

def probe_thread():
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()

def probe_system():
    os.system("true")

def probe_popen():
    subprocess.Popen(["true"]).wait()

def probe_numpy():
    torch.ones(2).numpy()

def probe_tolist():
    torch.ones(2).tolist()

def probe_array():
    torch.ones(2).__array__()

def probe_apply():
    torch.ones(2).apply_(lambda v: v + 1)

def probe_map():
    torch.ones(2).map_(torch.ones(2), lambda a, b: a + b)
'''


def test_tripwires_refuse_threads_and_processes_and_record_host_reads(tmp_path):
    """Threads, processes and the below-dispatcher methods are off the static allow-list (no
    kernel that passes it reaches them), so the tripwires are tested here, each in a fresh process
    (install_tripwires patches that process for good): what the candidate's own code does on trial
    is refused or recorded; the same calls outside a trial are not."""
    candidate = tmp_path / "candidate_probe.py"
    candidate.write_text(CANDIDATE)
    done = subprocess.run([sys.executable, "-c", TRIPWIRE_PROBE, str(candidate)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    idle = {k: v for k, v in found.items() if k.endswith(" idle")}
    assert all(v == ["ran", []] for v in idle.values()) and len(idle) == 8, idle
    assert found["probe_thread trial"] == ["opforge: a candidate may not start threads",
                                           ["threads: the candidate started a thread"]]
    assert found["probe_system trial"] == ["opforge: a candidate may not start processes (os.system)",
                                           ["subprocess: the candidate tried os.system"]]
    assert found["probe_popen trial"][0] == "opforge: a candidate may not start processes (subprocess.Popen)"
    for probe, method in (("numpy", "numpy"), ("tolist", "tolist"), ("array", "__array__"), ("apply", "apply_"),
                          ("map", "map_")):
        outcome, events = found[f"probe_{probe} trial"]
        expected = (f"below-dispatcher: forward called Tensor.{method}(), which computes outside PyTorch's "
                    "dispatcher and any kernel")
        assert outcome == "ran" and expected in events, (probe, events)  # __array__ calls numpy() as well
