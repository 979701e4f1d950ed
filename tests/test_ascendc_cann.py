"""The CANN-only part of the AscendC backend (cann.py) without CANN: its command lines, the project it
renders, and its parsers against recorded tool output (tests/data/ascendc/*.txt; see the README
there: shaped after clang's diagnostics, as bisheng is clang-based, and after Huawei's
ascendc_assert documentation, since no machine here can run CANN to capture them)."""
from __future__ import annotations

import os
import stat

import pytest

from conftest import DATA
from opforge.backends.ascendc import PLUGIN, cann
from opforge.backends.ascendc.project import read_project

ASC = DATA / "ascendc"


@pytest.fixture
def direct():
    return read_project((ASC / "direct_add.py").read_text())


@pytest.fixture
def mkb():
    return read_project((ASC / "mkb_add.py").read_text())


def test_cmake_command_lines_choose_the_run_mode_and_architecture(tmp_path):
    line = cann.cmake_configure(tmp_path / "src", tmp_path / "build", "cpu")
    assert line[:5] == ["cmake", "-S", str(tmp_path / "src"), "-B", str(tmp_path / "build")]
    assert "-DCMAKE_ASC_RUN_MODE=cpu" in line and "-DCMAKE_ASC_ARCHITECTURES=dav-2201" in line
    assert cann.cmake_build(tmp_path / "build", 8) == ["cmake", "--build", str(tmp_path / "build"), "-j", "8"]
    with pytest.raises(ValueError, match="npu, cpu or sim"):
        cann.cmake_configure(tmp_path, tmp_path, "gpu")


def test_msopgen_command_line_is_multikernelbenchs(tmp_path):
    assert cann.msopgen_gen(tmp_path / "AddCustom.json", tmp_path / "AddCustom") == [
        "msopgen", "gen", "-i", str(tmp_path / "AddCustom.json"), "-c", "ai_core-ascend910b", "-lan", "cpp",
        "-out", str(tmp_path / "AddCustom")]


def test_the_direct_project_renders_with_find_package_asc(tmp_path, direct):
    rendered = cann.render(direct, tmp_path, "add_custom_ops")
    cmake = (tmp_path / "CMakeLists.txt").read_text()
    assert "find_package(ASC REQUIRED)" in cmake and "LANGUAGES ASC CXX" in cmake
    assert "add_library(add_custom_ops MODULE add_custom_kernel.cpp add_custom_host.cpp)" in cmake
    assert "set_source_files_properties(add_custom_kernel.cpp PROPERTIES LANGUAGE ASC)" in cmake
    assert (tmp_path / "add_custom_tiling.h").read_text() == direct.files[0].text
    assert rendered.display["add_custom_kernel.cpp"] == "add_custom_kernel.cpp"


def test_the_multikernelbench_project_renders_in_msopgens_layout(tmp_path, mkb):
    rendered = cann.render(mkb, tmp_path, "custom_ops_lib")
    assert (tmp_path / "AddCustom" / "op_kernel" / "add_custom.cpp").read_text().count("__aicore__") >= 1
    assert (tmp_path / "AddCustom" / "op_host" / "add_custom_tiling.h").is_file()
    assert (tmp_path / "AddCustom.json").is_file()
    # two files named add_custom.cpp (op_host, op_kernel): a diagnostic's path tells them apart
    assert rendered.name(f"{tmp_path}/AddCustom/op_kernel/add_custom.cpp") == "kernel_src"
    assert rendered.name("/build/AddCustom/op_host/add_custom.cpp") == "host_operator_src"
    assert rendered.name("add_custom_tiling.h") == "host_tiling_src"


def test_bisheng_errors_become_reasons_naming_the_candidates_files(tmp_path, direct):
    rendered = cann.render(direct, tmp_path, "add_custom_ops")
    found = cann.compile_errors((ASC / "bisheng_errors.txt").read_text(), rendered)
    assert found == ["compile: use of undeclared identifier 'xLocall' (add_custom_kernel.cpp:46)",
                     "compile: no matching function for call to 'add_custom_launch' (add_custom_host.cpp:12)"]


def test_the_cpu_twin_parser_reads_asserts_errors_and_crashes(tmp_path, direct):
    rendered = cann.render(direct, tmp_path, "add_custom_ops")
    ok, reason = cann.cpu_twin_result(0, (ASC / "cpu_twin_assert.txt").read_text(), rendered)
    assert not ok and reason == "cpu-twin: Assertion `tileLength != 0' tile length is zero. (add_custom_kernel.cpp:44)"
    assert cann.cpu_twin_result(0, (ASC / "cpu_twin_pass.txt").read_text(), rendered) == (True, None)
    assert cann.cpu_twin_result(-11, "", rendered) == (False, "cpu-twin: the CPU twin died (signal 11)")
    assert cann.cpu_twin_result(0, "[ERROR] out of bounds write at UB 0x30000", rendered)[1] == \
        "cpu-twin: out of bounds write at UB 0x30000"


def test_without_cann_the_compile_is_skipped_with_the_cann_reason_and_the_emulator_runs(monkeypatch):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    assert cann.unavailable() == cann.NO_CANN
    out = PLUGIN.static((ASC / "direct_add.py").read_text(), float32_spec=True)
    assert out.reasons == [] and out.skip["compile"]["reason"] == cann.NO_CANN
    assert "cpu_run" not in out.skip and PLUGIN.cpu_runner().name == "opforge-ascendc-emu"
    from opforge.backends.ascendc.emulator import build

    monkeypatch.setattr(build, "compiler", lambda: None)  # no g++: the CPU run cannot happen either
    out = PLUGIN.static((ASC / "direct_add.py").read_text(), float32_spec=True)
    assert out.skip["cpu_run"]["status"] == "skipped" and "no g++" in out.skip["cpu_run"]["reason"]


def test_a_toolkit_with_bisheng_is_found_and_only_the_device_run_stays_skipped(tmp_path, monkeypatch):
    """A directory laid out as CANN's (bin/bisheng) stands in for the toolkit only to test the lookup."""
    bisheng = tmp_path / "bin" / "bisheng"
    bisheng.parent.mkdir()
    bisheng.write_text("#!/bin/sh\nexit 0\n")
    bisheng.chmod(bisheng.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    monkeypatch.setenv("PATH", os.defpath)
    assert cann.find_bisheng() == str(bisheng) and cann.unavailable() is None
    out = PLUGIN.static((ASC / "direct_add.py").read_text(), float32_spec=True)
    # compile and the CPU twin run in the worker (before_import builds the project); no NPU here
    assert set(out.skip) == {"device_run"} and out.skip["device_run"]["status"] == "skipped"
