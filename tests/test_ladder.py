"""The verification ladder: levels, step records and exit codes mean the same for every backend."""
from __future__ import annotations

import pytest

from opforge.harness import ladder
from opforge.harness.ladder import step


def steps(**status):
    return {name: step(s, reason=None if s == "passed" else "why") for name, s in status.items()}


def test_level_is_the_highest_passed_rung_not_the_last_step():
    assert ladder.level_of(steps(static="passed", compile="passed", cpu_run="failed")) == "compiled"
    assert ladder.level_of(steps(static="passed", compile="skipped", cpu_run="passed")) == "emulated"
    assert ladder.level_of(steps(static="passed", compile="passed", cpu_run="skipped",
                                  device_run="passed", profile="passed")) == "profiled"
    assert ladder.level_of(steps(static="failed")) is None


def test_a_skipped_or_unsupported_step_never_counts_as_passed():
    s = steps(static="passed", compile="passed", cpu_run="unsupported", device_run="skipped")
    assert ladder.level_of(s) == "compiled" and not ladder.numerics_passed(s)
    assert not ladder.promotable(ladder.level_of(s))


@pytest.mark.parametrize("status,correct,expected", [
    (dict(static="passed", compile="passed", cpu_run="passed"), True, 0),
    (dict(static="passed", compile="passed", cpu_run="failed"), False, 1),
    (dict(static="failed"), False, 1),
    (dict(static="passed", compile="passed", cpu_run="unsupported", device_run="skipped"), False, 3),
    (dict(static="passed", compile="skipped", cpu_run="skipped", device_run="skipped"), False, 3),
])
def test_exit_codes(status, correct, expected):
    assert ladder.exit_code({"correct": correct, "steps": steps(**status)}) == expected


def test_a_step_that_did_not_pass_must_say_why():
    with pytest.raises(ValueError, match="needs a reason"):
        step("skipped")
    with pytest.raises(ValueError, match="unknown step status"):
        step("maybe", reason="x")


def test_order_and_promotable_levels():
    assert [ladder.level_rank(lv) for lv in ladder.LEVELS] == sorted(ladder.level_rank(lv) for lv in ladder.LEVELS)
    assert ladder.level_rank("frontend-compiled") < ladder.level_rank("compiled") < ladder.level_rank("emulated")
    assert ladder.PROMOTABLE == ("emulated", "device", "profiled")
    assert ladder.hardware_slug("NVIDIA H200") == "nvidia-h200"
    assert ladder.hardware_slug("NVIDIA GeForce RTX 4090 (24 GB)") == "nvidia-geforce-rtx-4090-24-gb"


def test_a_triton_verdict_on_the_cpu_is_emulated_by_the_interpreter():
    from conftest import KERNELS, TINY
    from opforge.harness.verify import VerifyOptions, verify

    v = verify(TINY, KERNELS / "good.py", VerifyOptions(seed=7, trials=2, device="cpu"))
    assert v["correct"] and v["level"] == "emulated", (v["reasons"], v["steps"])
    assert v["verified_on"].startswith("cpu:triton-interpreter-")
    assert list(v["steps"]) == ["static", "compile", "cpu_run", "device_run", "profile"]
    assert v["steps"]["compile"]["status"] == "passed" and v["steps"]["compile"]["tool"] == "triton"
    assert v["steps"]["device_run"]["status"] == "skipped" and "no GPU" in v["steps"]["device_run"]["reason"]
    assert v["steps"]["profile"]["status"] == "skipped" and v["steps"]["profile"]["reason"]


def test_a_failed_step_leaves_the_later_ones_not_reached():
    from conftest import KERNELS, TINY
    from opforge.harness.verify import VerifyOptions, verify

    v = verify(TINY, KERNELS / "interpreter_only.py", VerifyOptions(seed=7, trials=2, device="cpu"))
    assert not v["correct"] and v["level"] == "static"
    assert v["steps"]["compile"]["status"] == "failed" and "sm_90" in v["steps"]["compile"]["reason"]
    assert v["failed_step"] == "compile" and v["steps"]["compile"]["check"] == "build"
    assert v["steps"]["cpu_run"] == step("skipped", reason="not reached: the failed step stopped the verification")
    assert ladder.exit_code(v) == 1


def test_a_run_job_that_dies_keeps_the_compile_step_it_passed(tmp_path):
    """The build job passed; the run job's process dies on its second call (the build, which records
    every case with its launches no-op'd, not interpreted, calls forward more often): the verdict keeps the
    compile step (level compiled), and the numerics step failed with the job's reason."""
    from conftest import KERNELS, TINY
    from opforge.harness.verify import VerifyOptions, verify

    source = (KERNELS / "good.py").read_text().replace(
        "    def forward(self, x):\n",
        "    def forward(self, x):\n        import os\n        self.calls = getattr(self, 'calls', 0) + 1\n"
        "        if self.calls > 1 and os.environ.get('TRITON_INTERPRET') == '1':\n            os._exit(7)\n", 1)
    assert "os._exit" in source
    kernel = tmp_path / "dies.py"
    kernel.write_text(source)
    v = verify(TINY, kernel, VerifyOptions(seed=7, trials=2, device="cpu", skip_static=True))
    assert not v["correct"] and v["steps"]["compile"]["status"] == "passed", v["steps"]
    assert v["steps"]["cpu_run"]["status"] == "failed" and v["level"] == "compiled", v["steps"]
    assert v["timings_note"] == "not profiled: the kernel was not verified"
