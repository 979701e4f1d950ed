"""The `opforge` command as a user runs it: exit codes, one-line errors, recording, listing."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from opforge import cli
from conftest import KERNELS, ROOT, TINY, write
from opforge.registry import Registry

OPFORGE = str(Path(sys.executable).parent / "opforge")
FAST = ["--device", "cpu", "--trials", "2", "--seed", "3"]


def opforge(*args: str, db: Path | None = None) -> subprocess.CompletedProcess:
    cmd = [OPFORGE] + (["--db", str(db)] if db else []) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def assert_one_line_error(result: subprocess.CompletedProcess, text: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("opforge: error:") and text in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_verify_correct_records_and_exits_0(isolated_registry):
    result = opforge("verify", str(TINY), str(KERNELS / "good.py"), *FAST)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CORRECT" in result.stdout and "candidate #1" in result.stdout
    listing = opforge("kernels")
    assert "tiny_softmax" in listing.stdout and "correct" in listing.stdout
    assert isolated_registry.exists()


def test_verify_json_contract_and_exit_1_for_a_cheat(tmp_path):
    db = tmp_path / "other.db"
    result = opforge("verify", str(TINY), str(KERNELS / "cheat_torch_compute.py"), "--json", *FAST, db=db)
    assert result.returncode == 1
    verdict = json.loads(result.stdout)
    assert verdict["correct"] is False and verdict["failed_step"] == "cpu_run"
    assert verdict["steps"]["cpu_run"]["check"] == "anticheat" and "stage" not in verdict and "stages" not in verdict
    assert verdict["reasons"][0].startswith("torch-compute")
    assert verdict["candidate_id"] == 1 and verdict["evaluation_id"] == 1
    shown = opforge("show", "1", "--json", db=db)
    assert json.loads(shown.stdout)["evaluations"][0]["reasons"] == verdict["reasons"]


def test_a_failing_verdict_names_its_failed_step_once(tmp_path):
    """One vocabulary: the failed step is named once, in its row with the check that failed; the
    header says INCORRECT and the steps after it say only that they were not reached."""
    db = tmp_path / "steps.db"
    result = opforge("verify", str(TINY), str(KERNELS / "cheat_torch_compute.py"), *FAST, db=db)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert out.count("cpu_run") == 1 and "cpu_run: failed the anticheat check (triton-interpreter " in out, out
    assert "INCORRECT  candidate #1" in out and "stage" not in out
    assert "profile: skipped: not reached: the failed step stopped the verification" in out
    shown = opforge("show", "1", db=db).stdout
    assert shown.count("cpu_run") == 1 and "incorrect, level compiled" in shown, shown
    old = json.loads((ROOT / "tests/data/verdict_softmax_cpu.json").read_text())  # keys from before steps
    with Registry(db) as reg:
        reg.record_evaluation(1, "cpu/x86_64/triton-interpreter", {}, old | {
            "correct": False, "stage": "compare", "reasons": ["mismatch: variant 0: max abs err 1e-2"]})
    listing = opforge("kernels", db=db).stdout
    assert listing.count("cpu_run") == 1 and "cpu_run failed (compare)" in listing, listing
    shown = opforge("show", "1", db=db).stdout.split("evaluation #2")[1]
    assert shown.count("cpu_run") == 1 and "cpu_run: failed the compare check: mismatch: variant 0" in shown, shown


def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch):
    assert_one_line_error(opforge("verify", str(tmp_path / "none.py"), str(KERNELS / "good.py")),
                          "spec file not found")
    assert_one_line_error(opforge("verify", str(TINY), str(tmp_path / "none.py")), "kernel file not found")
    bad = write(tmp_path / "bad.py", "import torch\ndef get_inputs():\n    return []\n")
    assert_one_line_error(opforge("verify", str(bad), str(KERNELS / "good.py")), "no `class Model")
    assert_one_line_error(opforge("verify", str(TINY), str(KERNELS / "good.py"), "--backend", "metal"),
                          "unknown backend 'metal'")
    monkeypatch.setenv("OPFORGE_ASCEND_PREFIX", str(tmp_path / "no-ascend"))  # a machine without triton-ascend
    assert_one_line_error(opforge("verify", str(TINY), str(KERNELS / "good.py"), "--backend", "triton_ascend"),
                          "backend 'triton_ascend' is unavailable: triton-ascend is not installed")
    assert_one_line_error(opforge("verify", str(TINY), str(KERNELS / "good.py"), "--sandbox", "vm"),
                          "unknown sandbox runtime 'vm' (known: auto, docker, jail, none)")
    assert_one_line_error(opforge("show", "42"), "no candidate with id 42")


def test_run_refuses_zero_trials_with_one_line_and_records_nothing(isolated_registry):
    result = opforge("run", str(ROOT / "ops" / "silu.py"), "--trials", "0", "--device", "cpu", "--budget", "1",
                     "--sandbox", "none")
    assert_one_line_error(result, "trials must be an integer of at least 1, got 0")
    with Registry(isolated_registry) as reg:
        assert reg.list_runs() == [] and reg.list_kernels() == []


@pytest.mark.parametrize("flag, value, message", [
    ("--sandbox", "vm", "unknown sandbox runtime 'vm' (known: auto, docker, jail, none)"),
    ("--backend", "metal", "unknown backend 'metal' (known: triton, cuda, triton_ascend, ascendc)"),
    ("--device", "gpu", "unknown device 'gpu' (known: auto, cpu)"),
    ("--drafter", "gpt", "unknown drafter 'gpt' (known: expert, llm)"),
    ("--budget", "0", "budget: rounds must be an integer of at least 1, got 0"),
])
def test_run_and_verify_refuse_unknown_names_with_one_line(flag, value, message, capsys):
    assert cli.main(["run", str(ROOT / "ops" / "silu.py"), flag, value]) == 2
    if flag not in ("--drafter", "--budget"):
        assert cli.main(["verify", str(TINY), str(KERNELS / "good.py"), flag, value]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert set(lines) == {f"opforge: error: {message}"}


def test_kernels_on_an_empty_registry_says_what_to_do():
    result = opforge("kernels")
    assert result.returncode == 0
    assert "no kernels recorded yet" in result.stdout


def test_show_and_promote(tmp_path, capsys):
    db = tmp_path / "r.db"
    # the two verdicts are recorded by the command in this process, whose warm jail it reuses (the
    # command as its own process is the test_verify_* tests' subject); show and promote run as one
    assert cli.main(["--db", str(db), "verify", str(TINY), str(KERNELS / "good.py"), *FAST]) == 0
    assert cli.main(["--db", str(db), "verify", str(TINY), str(KERNELS / "cheat_zeros.py"), *FAST]) == 1
    shown = opforge("show", "1", db=db)
    assert "_softmax_kernel" in shown.stdout and "correct" in shown.stdout
    promoted = opforge("promote", "1", db=db)
    assert promoted.returncode == 0 and "tiny_softmax v1" in promoted.stdout
    assert_one_line_error(opforge("promote", "2", db=db), "is not promotable: on cpu/x86_64/triton-interpreter: its latest evaluation is not correct")
    assert "★" in opforge("kernels", "tiny_softmax", db=db).stdout
