"""AscendC on the CPU: MultiKernelBench's add spec at its declared size, and the corpus of broken AscendC
kernels (tests/data/ascendc/emu/, MANIFEST in its __init__.py), each beside its correct control.

The whole corpus through `verify` takes minutes (a g++ build of each project, then every trial and stress
case under three core schedules): it runs with OPFORGE_ASCENDC_CORPUS=1 (and in
`benchmarks/ascendc_emulator.py --corpus`). By default a pair and one more kernel run on the emulator
directly (one build and one call each)."""
from __future__ import annotations

import ast
import os
import runpy
import time

import pytest
import torch

from conftest import DATA
from opforge.harness import ladder
from opforge.harness.sizes import size_constants, with_sizes
from opforge.harness.verify import VerifyOptions, prepare, verify

ASC = DATA / "ascendc"
MKB_SPEC = ASC / "mkb_add_spec.py"
DECLARED = {"batch_size": 4096, "dim": 393216}
EMU = ASC / "emu"
MANIFEST = runpy.run_path(str(EMU / "__init__.py"))["MANIFEST"]
OPTIONS = VerifyOptions(backend="ascendc", device="cpu", trials=1, seed=0, sandbox="none")


def test_multikernelbench_add_spec_at_its_declared_size_shrinks_for_a_cpu_run():
    """4096 x 393216 floats (18 GiB with the output): an AscendC run on this machine is a CPU run, so
    the size constants shrink as for every other backend (auto picks the CPU: no NPU here)."""
    for device in ("cpu", "auto"):
        started = time.perf_counter()
        spec, hardware = prepare(MKB_SPEC, VerifyOptions(backend="ascendc", device=device))
        assert hardware.device == "cpu" and time.perf_counter() - started < 20
        assert spec.sizes_declared == DECLARED and spec.sizes_used != DECLARED
        assert spec.sizes_used["batch_size"] * spec.sizes_used["dim"] <= 1 << 19 and spec.input_bytes < 16 << 20


@pytest.mark.parametrize("sizes", ["batch_size, dim = 4096, 393216", "(batch_size, dim) = [4096, 393216]",
                                   "batch_size = 4096\ndim = dim_total = 393216"])
def test_size_constants_bound_together_shrink_too(tmp_path, sizes):
    """MultiKernelBench-style specs also bind their sizes by tuple unpacking or a chained assignment:
    those are size constants as well (not shrunk, the add spec needed 18 GiB: exit 2)."""
    text = MKB_SPEC.read_text().replace("batch_size = 4096\ndim = 393216\n", sizes + "\n")
    assert sizes in text
    (tmp_path / "spec.py").write_text(text)
    spec, _ = prepare(tmp_path / "spec.py", VerifyOptions(backend="ascendc", device="cpu"))
    assert spec.sizes_used["batch_size"] * spec.sizes_used["dim"] <= 1 << 19 and spec.input_bytes < 16 << 20
    tree = ast.parse(text)
    assert size_constants(tree)["dim"] == 393216
    namespace: dict = {}
    exec(compile(with_sizes(tree, {"dim": 384}), "spec", "exec"), namespace)
    assert namespace["dim"] == 384 and namespace["batch_size"] == 4096  # the others stay bound
    if "dim_total" in sizes:
        assert namespace["dim_total"] == 393216


def test_the_verdict_on_the_declared_size_spec_records_the_sizes_used():
    """Past spec loading (no exit 2) with the sizes in the verdict; a candidate the static rules refuse
    keeps this test to the spec's part."""
    v = verify(MKB_SPEC, EMU / "add_ub_static.py", OPTIONS)
    assert v["failed_step"] == "static" and v["reasons"][0].startswith("ascendc-ub:")
    assert v["sizes"]["declared"] == DECLARED and v["sizes"]["used"] != DECLARED


def test_every_corpus_file_has_a_row_and_says_what_is_wrong():
    files = {p.name for p in EMU.glob("*.py")} - {"__init__.py"}
    rows = {name for name in MANIFEST if not name.startswith("../")}
    specs = {spec.removeprefix("../") for spec, *_ in MANIFEST.values() if not spec.startswith("../")}
    assert files == rows | specs
    for name in rows:
        doc = ast.get_docstring(ast.parse((EMU / name).read_text()))
        assert doc and "Expected: exit" in " ".join(doc.split()), name


def _code(reason: str) -> str:
    return reason.removeprefix("unverifiable: ").split(":")[0]


# Every row costs a g++ build and a verification (3 minutes for all, cold): by default one row per class of the
# pipeline's own findings, in both forms; OPFORGE_ASCENDC_CORPUS=1 runs them all.
SAMPLE = ("add_alloc_no_free.py", "mkb_add_free_before_copyout.py", "add_no_enque.py", "mkb_add_ub_runtime.py")


@pytest.mark.parametrize("name", sorted(MANIFEST) if os.environ.get("OPFORGE_ASCENDC_CORPUS") else SAMPLE)
def test_each_corpus_kernel_gets_its_verdict(name):
    spec, expected, codes, word = MANIFEST[name]
    v = verify(EMU / spec, EMU / name, OPTIONS)
    got = ladder.exit_code(v)
    assert got == expected, (got, v["level"], v["reasons"][:2])
    if expected == 0:
        assert v["level"] == "emulated" and not v["reasons"]
        return
    assert _code(v["reasons"][0]) in codes, v["reasons"][:2]
    assert word is None or word in v["reasons"][0], v["reasons"][0]


def _emulated(name: str, function: str):
    """The corpus kernel's project built by the emulator, called once on its spec's inputs: (output, reference)."""
    from opforge.backends.ascendc.emulator import EmulatedProject
    from opforge.backends.ascendc.project import read_project

    spec = runpy.run_path(str(EMU / MANIFEST[name][0]))
    torch.manual_seed(0)
    inputs = spec["get_inputs"]()
    project = EmulatedProject.build(read_project((EMU / name).read_text()))
    return project.call(function, [x.clone() for x in inputs]), spec["Model"]()(*inputs)


def test_a_ragged_tail_copied_by_datacopy_is_refused_and_datacopypad_keeps_it():
    """DataCopy of the 4-float tail (16 bytes, not a whole 32-byte block: the hardware drops it) is refused naming
    DataCopy and its line; DataCopyPad moves it."""
    from opforge.backends.ascendc.emulator import EmulatorError

    out, ref = _emulated("tail_pad_ok.py", "tail_add_ops.tail_add")
    assert torch.equal(out, ref)
    with pytest.raises(EmulatorError, match=r"DataCopy .*tail_add_kernel\.cpp:\d+.*16 bytes"):
        _emulated("tail_datacopy.py", "tail_add_ops.tail_add")


def test_a_scalar_read_of_a_vector_result_without_a_v_to_s_flag_is_a_race():
    from opforge.backends.ascendc.emulator import RaceError

    with pytest.raises(RaceError, match=r"GetValue .*softmax_kernel\.cpp:43.*ReduceMax"):
        _emulated("softmax_no_vs_sync.py", "row_softmax_ops.row_softmax")
