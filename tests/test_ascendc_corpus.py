"""AscendC on the CPU: MultiKernelBench's add spec at its declared size, and the corpus of broken
AscendC kernels (tests/data/ascendc/emu/, MANIFEST in its __init__.py), each beside its correct control."""
from __future__ import annotations

import ast
import runpy
import time

import pytest

from conftest import DATA, ROOT
from opforge.harness import ladder
from opforge.harness.verify import VerifyOptions, prepare, verify

ASC = DATA / "ascendc"
MKB_SPEC = ASC / "mkb_add_spec.py"
DECLARED = {"batch_size": 4096, "dim": 393216}


def test_multikernelbench_add_spec_at_its_declared_size_shrinks_for_a_cpu_run():
    """4096 x 393216 floats (18 GiB with the output): an AscendC run on this machine is a CPU run, so
    the size constants shrink as for every other backend (auto picks the CPU: no NPU here)."""
    for device in ("cpu", "auto"):
        started = time.perf_counter()
        spec, hardware = prepare(MKB_SPEC, VerifyOptions(backend="ascendc", device=device))
        assert hardware.device == "cpu" and time.perf_counter() - started < 20
        assert spec.sizes_declared == DECLARED and spec.sizes_used != DECLARED
        assert spec.sizes_used["batch_size"] * spec.sizes_used["dim"] <= 1 << 19 and spec.input_bytes < 16 << 20


def test_the_verdict_on_the_declared_size_spec_records_the_sizes_used():
    v = verify(MKB_SPEC, ASC / "mkb_add.py", VerifyOptions(backend="ascendc", device="cpu", trials=1, seed=0,
                                                           sandbox="none"))
    assert ladder.exit_code(v) in (0, 3), v["reasons"]  # 3 (static) without an emulator, 0 with it
    assert v["sizes"]["declared"] == DECLARED and v["sizes"]["used"] != DECLARED


EMU = ASC / "emu"
MANIFEST = runpy.run_path(str(EMU / "__init__.py"))["MANIFEST"]
OPTIONS = VerifyOptions(backend="ascendc", device="cpu", trials=1, seed=0, sandbox="none")


def test_every_corpus_file_has_a_row_and_says_what_is_wrong():
    files = {p.name for p in EMU.glob("*.py")} - {"__init__.py"}
    rows = {name for name in MANIFEST if not name.startswith("../")}
    specs = {spec.removeprefix("../") for spec, *_ in MANIFEST.values() if not spec.startswith("../")}
    assert files == rows | specs
    for name in rows:
        doc = ast.get_docstring(ast.parse((EMU / name).read_text()))
        assert doc and "Expected: exit" in " ".join(doc.split()), name


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_each_corpus_kernel_gets_its_verdict(name):
    if not (ROOT / "opforge/backends/ascendc/emulator/__init__.py").is_file():
        pytest.skip("the AscendC emulator (issue 34) is not here yet")
    spec, expected, codes, api = MANIFEST[name]
    v = verify(EMU / spec, EMU / name, OPTIONS)
    got = ladder.exit_code(v)
    assert got == expected, (got, v["level"], v["reasons"][:2])
    if expected == 0:
        assert v["level"] == "emulated" and not v["reasons"]
        return
    assert v["reasons"][0].split(":")[0] in codes, v["reasons"][:2]
    assert api is None or api in v["reasons"][0], v["reasons"][0]
