"""The Ascend NPU path's pieces that run on any machine: detection falls back to the CPU without
torch_npu, the sandbox passes CANN's environment and Ascend's device nodes, and the event timer the
NPU profile uses (driven here by a host clock standing in for torch.npu's events)."""
from __future__ import annotations

import time

import pytest

from opforge.harness import hardware, profile
from opforge.sandbox import base, exposure


def test_without_torch_npu_an_npu_backend_runs_on_the_cpu():
    assert hardware.find_npu() is None  # no torch_npu on this machine
    hw = hardware.detect(accelerator="NPU")
    assert hw.device == "cpu"


def test_cann_environment_reaches_the_job_only_with_cann(monkeypatch):
    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/local/Ascend/ascend-toolkit/latest/lib64")
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    assert "LD_LIBRARY_PATH" not in base.job_env("/scratch")
    monkeypatch.setenv("ASCEND_HOME_PATH", "/usr/local/Ascend/ascend-toolkit/latest")
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "0")
    env = base.job_env("/scratch")
    assert env["ASCEND_HOME_PATH"].endswith("latest") and env["ASCEND_RT_VISIBLE_DEVICES"] == "0"
    assert env["LD_LIBRARY_PATH"].endswith("lib64")


def test_ascend_device_nodes_are_exposed_beside_nvidias():
    assert {"/dev/nvidia*", "/dev/davinci*", "/dev/devmm_svm", "/dev/hisi_hdc"} <= set(exposure.DEVICE_NODES)


class HostEvents:
    """torch.npu's event API (Event(enable_timing), record, elapsed_time in ms, synchronize,
    current_device) on the host clock."""

    class Event:
        def __init__(self, enable_timing: bool = False):
            self.t = None

        def record(self):
            self.t = time.perf_counter()

        def elapsed_time(self, other) -> float:
            return (other.t - self.t) * 1e3

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def current_device():
        return "cpu"


class FakeClock(HostEvents):
    """HostEvents on a clock that only the timed function moves: no host load can change a reading."""

    now = 0.0

    class Event(HostEvents.Event):
        def record(self):
            self.t = FakeClock.now


def test_the_event_timer_reports_the_median_of_runs():
    pattern = [2.0, 2.0, 50.0, 2.5, 2.0, 3.0, 2.0]  # ms; one outlier in seven, so the mean is ~9 ms
    calls = []

    def run():
        ms = pattern[len(calls) % len(pattern)]
        calls.append(ms)
        FakeClock.now += ms / 1e3

    ms = profile._bench_events(run, FakeClock, warmup_ms=40, rep_ms=200)
    estimate = sum(calls[1:6]) / 5
    timed = calls[-max(1, int(200 / estimate)):]
    assert len(calls) == 1 + 5 + int(40 / estimate) + len(timed)  # first call, estimate, warm-up, timed runs
    assert ms == pytest.approx(sorted(timed)[len(timed) // 2]) and ms <= 3.0
    assert sum(timed) / len(timed) > 8  # a mean (or the total) would be far from it


def test_the_event_timer_times_real_runs_on_the_host_clock():
    def two_ms():
        end = time.perf_counter() + 0.002
        while time.perf_counter() < end:
            pass

    assert profile._bench_events(two_ms, HostEvents, warmup_ms=4, rep_ms=20) >= 1.9  # never under the work
