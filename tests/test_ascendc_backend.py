"""`opforge verify --backend ascendc` end to end on a 2-input add spec, on a machine without CANN: a
correct Add project (either form) verifies at level `emulated` on opforge's AscendC emulator (the
compile step skipped with the reason naming CANN, the device run naming the NPU), a wrong one (a tile
loop one short, an output only half the cores write) exits 1 with the mismatch, an API the emulator
does not model gives exit 3 naming it, and each project that breaks a static rule exits 1 at the
static step with its reason."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import DATA, ROOT
from opforge.harness import ladder
from opforge.backends import BACKENDS, plugin
from opforge.backends.ascendc.api import KERNEL_CALLS
from opforge.backends.ascendc.cann import NO_CANN
from opforge.backends.ascendc.emulator.build import INCLUDE_DIR
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


def unmodelled_api() -> str:
    """A vector API the static table knows and the emulator's headers do not define (the first of a few)."""
    headers = " ".join(p.read_text() for p in INCLUDE_DIR.glob("*.h"))
    return next(n for n in ("Digamma", "Lgamma", "Erfc", "Cbrt", "Hypot") if n in KERNEL_CALLS and
                not re.search(rf"\b{n}\b", headers))


def test_the_cli_exits_3_naming_an_api_the_emulator_lacks(tmp_path):
    api = unmodelled_api()
    path = tmp_path / "candidate.py"
    path.write_text(DIRECT.replace("AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);",
                                   f"AscendC::{api}(zLocal, xLocal, TILE_LENGTH);", 1))
    done = subprocess.run([sys.executable, "-m", "opforge.cli", "verify", str(SPEC), str(path),
                           "--backend", "ascendc", "--sandbox", "none"], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"unsupported: AscendC::{api} (add_custom_kernel.cpp:" in done.stdout and "CANN" in done.stdout


def test_the_cube_unit_met_at_run_time_is_unsupported_and_exit_3(tmp_path):
    """A flag between the cube and vector pipes is found only when the kernel runs: the CPU run is
    `unsupported` naming the API and line (the level stays static, exit 3), never a failure or a pass."""
    path = tmp_path / "candidate.py"
    path.write_text(DIRECT.replace("        AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);",
                                   "        AscendC::SetFlag<AscendC::HardEvent::M_V>(0);\n"
                                   "        AscendC::WaitFlag<AscendC::HardEvent::M_V>(0);\n"
                                   "        AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);", 1))
    v = verify(SPEC, path, OPTIONS)
    assert ladder.exit_code(v) == 3 and v["level"] == "static" and v["steps"]["cpu_run"]["status"] == "unsupported"
    assert re.match(r"unverifiable: unsupported: \w+ \d+: SetFlag .*\(add_custom_kernel\.cpp:46\): the cube unit",
                    v["reasons"][0]), v["reasons"]


@pytest.mark.parametrize("candidate", ["direct_add.py", "mkb_add.py"])
def test_a_correct_add_verifies_emulated_without_cann(candidate):
    v = verify(SPEC, ASC / candidate, OPTIONS)
    assert ladder.exit_code(v) == 0 and v["level"] == "emulated", v["reasons"]
    assert v["verified_on"] == "cpu:opforge-ascendc-emu-1.0" and v["steps"]["cpu_run"]["status"] == "passed"
    assert v["steps"]["compile"]["status"] == "skipped" and v["steps"]["compile"]["reason"] == NO_CANN
    assert v["steps"]["device_run"]["status"] == "skipped" and "NPU" in v["steps"]["device_run"]["reason"]


@pytest.mark.parametrize("candidate, old, new", [
    ("direct_add.py", "for (int32_t i = 0; i < this->tileNum; i++)", "for (int32_t i = 0; i < this->tileNum - 1; i++)"),
    ("mkb_add.py", "    op.Process();\n}", "    if (AscendC::GetBlockIdx() < AscendC::GetBlockNum() / 2) op.Process();\n}"),
])
def test_a_wrong_add_exits_1_with_the_mismatch(tmp_path, candidate, old, new):
    """A tile loop one short leaves each core's last tile, half the cores leave half the output: the
    output's unwritten elements are at::empty_like's poison (NaN), never stale or zero."""
    text = (ASC / candidate).read_text()
    assert text.count(old) == 1
    path = tmp_path / candidate
    path.write_text(text.replace(old, new))
    v = verify(SPEC, path, OPTIONS)
    assert ladder.exit_code(v) == 1 and v["steps"]["cpu_run"]["status"] == "failed", v["reasons"]
    assert v["reasons"][0].startswith("mismatch:") and "NaN" in v["reasons"][0], v["reasons"]


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


def test_numerics_are_unavailable_only_where_neither_cann_nor_the_emulator_can_run(monkeypatch):
    from opforge.backends.ascendc.emulator import build

    assert plugin("ascendc").numerics_unavailable() is None  # g++ builds the emulator here
    monkeypatch.setattr(build, "compiler", lambda: None)
    assert plugin("ascendc").numerics_unavailable() == NO_CANN


def test_the_agent_loop_stops_after_one_round_when_nothing_can_be_verified_here(tmp_path):
    """Without CANN and without g++ no AscendC candidate can reach a numerics step: the run records the
    first round's static verdicts and stops saying why, instead of spending its round budget."""
    from opforge.registry import Registry

    if plugin("ascendc").numerics_unavailable() is None:
        pytest.skip("the emulator (or CANN) runs AscendC here: the loop can run the numerics")
    db = tmp_path / "run.db"
    run = subprocess.run([sys.executable, "-m", "opforge.cli", "--db", str(db), "run", "ops/silu.py",
                          "--backend", "ascendc", "--sandbox", "none", "--budget", "4"],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert run.returncode == 1, run.stderr
    assert "no candidate can be verified on this machine: AscendC cannot be compiled or run here" in run.stdout
    assert "Traceback" not in run.stderr
    rows = Registry(db).list_kernels()
    assert len(rows) == 1 and rows[0].level == "static"  # one round: the expert's first configuration
