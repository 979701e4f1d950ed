"""opforge export for Ascend: a promoted Triton-Ascend kernel becomes the op's `npu` entry (its own
module, imported only where triton-ascend's `triton` is the importable one), which the package's
check runs on this CPU under triton-ascend's interpreter with fallback forbidden (and fails for a
wrong kernel); a promoted AscendC kernel becomes a project directory beside the package in either
candidate form; the vLLM entry point (also how vllm-ascend loads the library) is in the wheel's
metadata and is a clean no-op without vLLM.

The Triton-Ascend row comes from a real verification (tests/data/export_ascend/softmax_ascend.py,
`--sandbox none`, once per module); the AscendC rows are recorded as CANN would have verified
them, since no CANN runs here."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch

from conftest import ROOT, TINY
from opforge.exporter import export_library
from opforge.exporter.library import build_wheel
from opforge.harness.verify import VerifyOptions, prepare, verify_source
from opforge.registry import Registry
from opforge.registry.recording import record_verification

DATA = ROOT / "tests" / "data" / "export_ascend"
ASCENDC = ROOT / "tests" / "data" / "ascendc"  # the AscendC backend's own Add projects, in both forms
PREFIX = ROOT / ".venv" / "ascend"
TORCH_SITE = str(Path(torch.__file__).resolve().parent.parent)
CANN_VERDICT = {"correct": True, "failed_step": None, "reasons": [], "backend": "ascendc", "sizes": {"used": {}},
                "level": "device", "verified_on": "ascend910b3", "timings": None}


def needs_prefix() -> None:
    """The interpreter checks need triton-ascend's prefix: a failure in CI, a skip elsewhere."""
    if not (PREFIX / "triton" / "backends" / "ascend").is_dir():
        if os.environ.get("OPFORGE_CI") == "1":
            pytest.fail(f"triton-ascend's prefix {PREFIX} is missing (make setup installs it)")
        pytest.skip(f"triton-ascend's prefix {PREFIX} is missing (make setup installs it)")


def isolated(code: str, lib: Path, ascend: bool, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -I -S` with the exported project and torch's site-packages on sys.path (opforge not
    importable), triton-ascend's prefix first when `ascend`, as on an Ascend host."""
    path = ([str(PREFIX)] if ascend else []) + [str(lib), TORCH_SITE]
    prelude = (f"import sys; sys.path[:0] = {path!r}\n"
               "import importlib.util; assert importlib.util.find_spec('opforge') is None, 'opforge importable'\n")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ASC_LIB", "TRITON_INTERPRET"))}
    return subprocess.run([sys.executable, "-I", "-S", "-c", prelude + code], cwd=lib, capture_output=True,
                          text=True, timeout=300, env=base | (env or {}))


def check(lib: Path, *args: str, ascend: bool = True) -> subprocess.CompletedProcess:
    code = f"import sys; from asc_lib.check import main; sys.exit(main({list(args)!r}))"
    return isolated(code, lib, ascend, env={"TRITON_INTERPRET": "1", "ASC_LIB_NO_FALLBACK": "1"})


def record_cann(reg: Registry, name: str, spec: Path, candidate: Path) -> int:
    """An AscendC candidate as a promoted version, its verdict recorded as a CANN + NPU run would be."""
    # The name in the source too: the registry keeps one spec per source text.
    spec_id = reg.record_spec(name, str(spec), spec.read_text().replace('name="add2"', f'name="{name}"'))
    cand = reg.record_candidate(spec_id, candidate.read_text(), "ascendc", "user")
    reg.record_evaluation(cand, "npu/Ascend910B3/cann", {"name": "Ascend910B3"}, CANN_VERDICT)
    reg.promote(cand)
    return cand


@pytest.fixture(scope="module")
def verified(tmp_path_factory):
    """The Triton-Ascend softmax verified for real, and its verdict."""
    options = VerifyOptions(backend="triton_ascend", device="cpu", trials=2, seed=5, sandbox="none")
    spec, hardware = prepare(TINY, options)
    source = (DATA / "softmax_ascend.py").read_text()
    verdict = verify_source(spec, hardware, source, options)
    if not verdict["correct"] and not PREFIX.is_dir() and os.environ.get("OPFORGE_CI") != "1":
        pytest.skip(f"triton-ascend's prefix {PREFIX} is missing: {verdict['reasons'][:1]}")
    assert verdict["correct"] and verdict["level"] == "emulated", verdict["reasons"]
    return spec, hardware, source, verdict


@pytest.fixture(scope="module")
def lib(verified, tmp_path_factory) -> Path:
    spec, hardware, source, verdict = verified
    root = tmp_path_factory.mktemp("ascend")
    with Registry(root / "reg.db") as reg:
        reg.promote(record_verification(reg, spec, source, verdict, hardware, drafter="user")[0])
        record_cann(reg, "add2", ASCENDC / "add_spec.py", ASCENDC / "direct_add.py")
        record_cann(reg, "add2_mkb", ASCENDC / "add_spec.py", ASCENDC / "mkb_add.py")
        result = export_library(reg, root / "lib", name="asc_lib")
    assert result.ascendc == ["ascendc/add2", "ascendc/add2_mkb"]
    assert any(n.startswith("AscendC projects written") and "ascendc/add2/" in n for n in result.notes)
    assert result.ops[0].kernels == ("triton_ascend npu (emulated)",)
    return root / "lib"


def test_a_promoted_triton_ascend_kernel_is_the_ops_npu_entry_in_a_module_of_its_own(lib):
    pkg = lib / "asc_lib"
    (kernel,) = json.loads((pkg / "configs" / "tiny_softmax.json").read_text())["kernels"]
    assert (kernel["backend"], kernel["arch"], kernel["module"]) == ("triton_ascend", "npu", "tiny_softmax__npu")
    assert kernel["launches"][0]["target"] == "Ascend910B3" and kernel["launches"][0]["kernel"] == "_softmax_rows"
    assert (DATA / "softmax_ascend.py").read_text().strip() in (pkg / "ops" / "tiny_softmax__npu.py").read_text()
    entry = (pkg / "ops" / "tiny_softmax.py").read_text()  # entry points only: no kernel, no triton import
    assert "import triton" not in entry and "@triton.jit" not in entry and "_export_custom" in entry
    (version,) = json.loads((pkg / "metadata.json").read_text())["ops"]["tiny_softmax"]["versions"]
    assert (version["backend"], version["arch"], version["level"], version["verified_on"]) == (
        "triton_ascend", "npu", "emulated", "cpu:triton-ascend-interpreter-3.2.0")
    readme = (lib / "README.md").read_text()
    assert "## Ascend NPUs (Triton-Ascend)" in readme and "pip install --no-deps ." in readme
    assert "| triton_ascend | emulated | cpu:triton-ascend-interpreter-3.2.0 |" in readme
    assert "--device npu-interpreter" in readme and "Triton and Triton-Ascend kernels exported" in readme


def test_the_check_runs_the_npu_kernel_under_triton_ascends_interpreter_with_fallback_forbidden(lib):
    needs_prefix()
    ran = check(lib, "--device", "npu-interpreter", "--json")
    assert ran.returncode == 0, ran.stderr[-3000:]
    (result,) = json.loads(ran.stdout)["results"]
    assert result["ok"] and result["backend"] == "triton_ascend" and result["fallbacks"] == 0, result
    assert result["variants"] == 2 and result["max_abs_err"] < 1e-5
    assert (result["level"], result["verified_on"]) == ("emulated", "cpu:triton-ascend-interpreter-3.2.0")
    # The same call without TRITON_INTERPRET=1 is refused in one line (triton reads it at import).
    ran = isolated("import sys; from asc_lib.check import main; sys.exit(main(['--device', 'npu-interpreter']))",
                   lib, ascend=True)
    assert ran.returncode == 2 and ran.stderr.strip().splitlines() == [
        "asc_lib.check: error: --device npu-interpreter needs TRITON_INTERPRET=1 in the environment "
        "(read when triton is imported) and triton-ascend's prefix first on PYTHONPATH"]


def test_next_to_nvidias_triton_the_npu_module_is_never_imported_and_the_op_falls_back(lib):
    code = ("import os, sys, torch, asc_lib\nx = torch.randn(5, 40)\n"
            "assert torch.allclose(asc_lib.tiny_softmax(x), torch.softmax(x, -1))\n"
            "os.environ['ASC_LIB_NPU_INTERPRET'] = '1'\n"  # asks for the npu entry: still not importable here
            "try:\n    asc_lib.tiny_softmax(x)\nexcept Exception as exc:\n    print('raised:', exc)\n"
            "print('asc_lib.ops.tiny_softmax__npu' in sys.modules, dict(asc_lib.fallbacks))\n")
    ran = isolated(code, lib, ascend=False, env={"TRITON_INTERPRET": "1"})
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "this device is cpu; on a CPU: TRITON_INTERPRET=1 ASC_LIB_NPU_INTERPRET=1 under triton-ascend" in ran.stderr
    assert "the Triton-Ascend kernel needs triton-ascend's `triton`; the importable one" in ran.stderr
    assert ran.stdout.splitlines()[-1] == "False {'tiny_softmax': 2}"
    ran = check(lib, "--device", "npu-interpreter", "--json", ascend=False)
    (result,) = json.loads(ran.stdout)["results"]
    assert ran.returncode == 0 and "is another Triton" in result["skipped"]


def test_a_wrong_triton_ascend_kernel_fails_the_packages_check(verified, tmp_path):
    needs_prefix()
    spec, hardware, source, verdict = verified
    wrong = source.replace("e / tl.sum(e, 0)", "e / (tl.sum(e, 0) + 1.0)")
    assert wrong != source
    with Registry(tmp_path / "reg.db") as reg:  # the verdict of the right kernel, recorded for a wrong one
        reg.promote(record_verification(reg, spec, wrong, verdict, hardware, drafter="user")[0])
        export_library(reg, tmp_path / "lib", name="asc_lib")
    ran = check(tmp_path / "lib", "--device", "npu-interpreter")
    assert ran.returncode == 1, ran.stdout + ran.stderr[-3000:]
    assert ran.stdout.startswith("FAIL tiny_softmax") and "triton_ascend" in ran.stdout and "Mismatched" in ran.stdout


def test_a_direct_launch_ascendc_kernel_is_a_cmake_project_beside_the_package(lib):
    project = lib / "ascendc" / "add2"
    sources = {"add_custom_host.cpp", "add_custom_kernel.cpp", "add_custom_tiling.h"}
    assert {p.name for p in project.iterdir()} == sources | {"CMakeLists.txt", "README.md", "candidate.py"}
    assert (project / "candidate.py").read_text() == (ASCENDC / "direct_add.py").read_text()
    cmake = (project / "CMakeLists.txt").read_text()
    assert cmake.index("find_package(ASC REQUIRED)") < cmake.index("project(add_custom_ops LANGUAGES ASC CXX)")
    assert "set_source_files_properties(add_custom_kernel.cpp PROPERTIES LANGUAGE ASC)" in cmake
    assert "Python3_add_library(add_custom_ops MODULE WITH_SOABI\n    add_custom_host.cpp\n    add_custom_kernel.cpp\n)" \
        in cmake and "add_custom_tiling.h" not in cmake
    readme = (project / "README.md").read_text()
    assert "cmake -S . -B build" in readme and "source $ASCEND_HOME_PATH/set_env.sh" in readme
    assert 'torch.library.custom_op("asc_lib_ascendc::add2"' in readme
    assert "def add2(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:" in readme
    assert "add_custom_ops.add_custom(x, y)" in readme and "level `device` on `ascend910b3`" in readme
    assert "`add2`, `add2_mkb`: AscendC projects in `ascendc/<op>/`" in (lib / "README.md").read_text()


def test_a_multikernelbench_ascendc_kernel_gets_the_msopgen_layout(lib):
    project = lib / "ascendc" / "add2_mkb"
    files = {str(p.relative_to(project)) for p in project.rglob("*") if p.is_file()}
    assert files == {"AddCustom.json", "op_host/add_custom.cpp", "op_host/add_custom_tiling.h",
                     "op_kernel/add_custom.cpp", "CppExtension/csrc/op.cpp", "CppExtension/setup.py",
                     "model.py", "README.md"}
    readme = (project / "README.md").read_text()
    assert "msopgen gen -i AddCustom.json -c ai_core-Ascend910B3 -lan cpp -out build/AddCustom" in readme
    assert "EXEC_NPU_CMD(aclnnAddCustom" in readme and "custom_ops_lib.add_custom" in readme
    assert "NpuExtension(\"custom_ops_lib\"" in (project / "CppExtension" / "setup.py").read_text()


def test_an_unreadable_ascendc_candidate_is_left_out_with_a_note(verified, tmp_path):
    spec, hardware, source, verdict = verified
    bad = tmp_path / "bad.py"
    bad.write_text("KERNEL = 'not a project'\n")
    with Registry(tmp_path / "reg.db") as reg:
        reg.promote(record_verification(reg, spec, source, verdict, hardware, drafter="user")[0])
        record_cann(reg, "add2", ASCENDC / "add_spec.py", bad)
        result = export_library(reg, tmp_path / "lib", name="asc_lib")
    assert not (tmp_path / "lib" / "ascendc").exists() and result.ascendc == []
    (note,) = [n for n in result.notes if n.startswith("add2:")]
    assert note.startswith("add2: left out AscendC v1 on npu/Ascend910B3/cann: add2: the AscendC candidate cannot "
                           "be read: ascendc-format: no AscendC project")


def test_the_vllm_entry_point_is_in_the_wheel_and_a_no_op_without_vllm(lib, tmp_path):
    wheel = build_wheel(lib, "asc_lib")
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        (entry,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        points = whl.read(entry).decode()
    assert "[vllm.general_plugins]\nasc_lib = asc_lib.plugins:register" in points
    assert "asc_lib/ops/tiny_softmax__npu.py" in names and not any(n.startswith("ascendc/") for n in names)
    ran = isolated("import importlib.util, logging; logging.basicConfig(level=logging.INFO)\n"
                   "assert importlib.util.find_spec('vllm') is None\n"
                   "from asc_lib import plugins; plugins.register(); print('ok')", lib, ascend=False)
    assert ran.returncode == 0 and ran.stdout.strip() == "ok", ran.stderr[-3000:]
    assert ran.stderr.strip().splitlines() == ["INFO:asc_lib:asc_lib: registered 1 ops as torch.ops.asc_lib.*: tiny_softmax"]
