"""`opforge verify --backend ascendc` end to end on a 2-input add spec: a correct Add project (either
form) gets the honest answer for a machine without CANN — exit 3, level static, compile and CPU twin
skipped with the reason naming CANN, never promotable — and each broken project exits 1 at the
static step with its reason."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import DATA, ROOT
from opforge.harness import ladder
from opforge.backends import BACKENDS, plugin
from opforge.backends.ascendc.cann import NO_CANN
from opforge.harness.verify import VerifyOptions, verify

ASC = DATA / "ascendc"
SPEC = ASC / "add_spec.py"
OPTIONS = VerifyOptions(backend="ascendc", device="cpu", trials=1, seed=3, sandbox="none")
DIRECT = (ASC / "direct_add.py").read_text()


@pytest.fixture(autouse=True)
def no_cann(monkeypatch):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)


def test_the_ascendc_row_is_a_real_plugin_for_npus():
    assert BACKENDS["ascendc"].module == "opforge.backends.ascendc"
    assert plugin("ascendc").accelerator == "NPU" and BACKENDS["ascendc"].unavailable() is None


def test_the_cli_exits_3_for_a_correct_add_and_names_cann():
    done = subprocess.run([sys.executable, "-m", "opforge.cli", "verify", str(SPEC), str(ASC / "direct_add.py"),
                           "--backend", "ascendc", "--sandbox", "none"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "CANN" in done.stdout + done.stderr


@pytest.mark.parametrize("candidate", ["direct_add.py", "mkb_add.py"])
def test_a_correct_add_is_static_level_unverifiable_and_never_promotable(candidate):
    v = verify(SPEC, ASC / candidate, OPTIONS)
    assert ladder.exit_code(v) == 3 and v["level"] == "static" and not ladder.promotable(v["level"])
    assert v["steps"]["static"]["status"] == "passed"
    for name in ("compile", "cpu_run"):
        assert v["steps"][name]["status"] == "skipped" and v["steps"][name]["reason"] == NO_CANN
    assert v["steps"]["device_run"]["status"] == "skipped" and "NPU" in v["steps"]["device_run"]["reason"]
    assert v["reasons"] == [f"unverifiable: {NO_CANN}"] and v["verified_on"] is None and v["timings"] is None


def broken(tmp_path, old: str, new: str):
    assert old in DIRECT
    path = tmp_path / "candidate.py"
    path.write_text(DIRECT.replace(old, new, 1))
    return verify(SPEC, path, OPTIONS)


@pytest.mark.parametrize("old, new, code, words", [
    ("TILE_LENGTH = 2048;", "TILE_LENGTH = 12800;", "ascendc-ub", "307200 bytes"),
    ("inQueueX.FreeTensor(xLocal);", "", "ascendc-queue", "1 AllocTensor but 0 FreeTensor"),
    ("AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], TILE_LENGTH);",
     "AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], 25);", "ascendc-datacopy", "100 bytes"),
    ("tiling.tileNum = tiling.totalLength / BLOCK_DIM / TILE_LENGTH;", "", "ascendc-tiling", "never set on the host"),
])
def test_each_broken_project_exits_1_at_static_with_its_reason(tmp_path, old, new, code, words):
    v = broken(tmp_path, old, new)
    assert ladder.exit_code(v) == 1 and (v["failed_step"], ladder.failed_check(v)) == ("static", "rules") and v["level"] is None
    assert v["steps"]["static"]["status"] == "failed" and v["reasons"][0].startswith(code + ":")
    assert words in v["reasons"][0] and v["steps"]["compile"]["status"] == "skipped"


def test_a_python_syntax_error_fails_at_load(tmp_path):
    v = broken(tmp_path, "class ModelNew(torch.nn.Module):", "class ModelNew(torch.nn.Module)")
    assert (v["failed_step"], ladder.failed_check(v)) == ("static", "syntax") and ladder.exit_code(v) == 1
    assert v["reasons"][0].startswith("syntax-error")


def test_the_agent_loop_stops_after_one_round_when_nothing_can_be_verified_here(tmp_path):
    """Without CANN no AscendC candidate can reach a numerics step: the run records the first
    round's static verdicts and stops saying why, instead of spending its round budget."""
    from opforge.backends.ascendc import cann
    from opforge.registry import Registry

    if cann.unavailable() is None:
        pytest.skip("CANN is installed here: the loop can run the numerics")
    db = tmp_path / "run.db"
    run = subprocess.run([sys.executable, "-m", "opforge.cli", "--db", str(db), "run", "ops/silu.py",
                          "--backend", "ascendc", "--sandbox", "none", "--budget", "4"],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert run.returncode == 1, run.stderr
    assert "no candidate can be verified on this machine: AscendC cannot be compiled or run here" in run.stdout
    assert "Traceback" not in run.stderr
    rows = Registry(db).list_kernels()
    assert len(rows) == 1 and rows[0].level == "static"  # one round: the expert's first configuration
