"""The AscendC emulator's host side (opforge/backends/ascendc/emulator/): launch rewriting, what it
generates in CANN's place, how a g++ error becomes a reason, the schedule comparison, and one probe
project in MultiKernelBench's form (tests/data/ascendc/emu_host_probe.py) built once and called
through every kind of binding: its correct mode beside the wrong ones (odd cores' parts unwritten,
no SetBlockDim, a dtype the OpDef does not declare, a failed TORCH_CHECK)."""
from __future__ import annotations

import pytest
import torch

from conftest import DATA
from opforge.backends.ascendc.emulator import EmulatedProject, HostError, RaceError, UnsupportedFeature
from opforge.backends.ascendc.emulator.build import EmuBuildError, build_error, compiler
from opforge.backends.ascendc.emulator.errors import CrashError
from opforge.backends.ascendc.emulator.glue import dtype_macros, kernel_prelude, tiling_structs
from opforge.backends.ascendc.emulator.library import TensorBytes, compare_schedules
from opforge.backends.ascendc.emulator.translate import kernels, rewrite_launches
from opforge.backends.ascendc.project import read_project

PROBE = DATA / "ascendc" / "emu_host_probe.py"
DISPLAY = {"add_custom_kernel.cpp": "kernel_src", "pybind11.cpp": "python_bind_src"}


@pytest.fixture(scope="module")
def probe():
    if compiler() is None:
        pytest.skip("the emulator builds with g++, and there is none here")
    return EmulatedProject.build(read_project(PROBE.read_text())).modules["custom_ops_lib"]


def test_both_launch_forms_become_emulator_launches_on_their_lines():
    text = ('void run() {\n  add_custom<<<blockDim, nullptr,\n    stream>>>(x, /* a, ) */ y, "s)", t);\n'
            "  auto r = ACLRT_LAUNCH_KERNEL(add_custom)(8, stream, a, b);\n}\n")
    out = rewrite_launches(text)
    g = "::opforge_host::gm_arg"  # a void* data pointer converts to the parameter's pointer type
    assert (f'opforge_asc::launch("add_custom", blockDim, [&] {{ add_custom({g}(x), {g}(/* a, ) */ y), {g}("s)"), '
            f'{g}(t)); }})') in out
    assert f'(opforge_asc::launch("add_custom", 8, [&] {{ add_custom({g}(a), {g}(b)); }}), 0u)' in out
    assert out.count("\n") == text.count("\n") and out.splitlines()[3].startswith("  auto r")


def test_kernels_are_read_with_their_parameters():
    (k,) = kernels('// extern "C" __global__ __aicore__ void hidden(GM_ADDR a) {}\n'
                   'extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, Tiling t) { }')
    assert (k.name, k.params) == ("add_custom", ["GM_ADDR x", "GM_ADDR y", "Tiling t"])


def test_the_kernel_tiling_struct_keeps_the_host_classes_fields_in_order():
    text = PROBE.read_text()
    host_tiling = text.split('host_tiling_src = """')[1].split('"""')[0]
    (struct,), registered = tiling_structs(host_tiling)
    assert struct.fields == ["uint16_t flag", "uint64_t bigLength", "uint32_t spare[3]", "float scale",
                             "uint32_t totalLength", "uint32_t tileNum"]
    assert registered == {"AddCustom": "AddCustomTilingData"}
    op = {"op": "AddCustom", "input_desc": [{"name": "x", "type": ["float16", "float"]}],
          "output_desc": [{"name": "out_z", "type": ["float16", "float"]}]}
    assert dtype_macros(op, 1) == ["#define DTYPE_X float", "#define DTYPE_OUT_Z float"]
    assert "#define GET_TILING_DATA(var, tiling) AddCustomTilingData var;" in kernel_prelude(op, host_tiling)


def test_an_api_the_emulator_lacks_is_unsupported_and_named():
    stderr = ("/tmp/b/add_custom_kernel.cpp: In member function 'void K::Compute()':\n"
              "/tmp/b/add_custom_kernel.cpp:40:18: error: 'SoftmaxFlashV2' is not a member of 'AscendC'\n")
    err = build_error(stderr, DISPLAY)
    assert isinstance(err, UnsupportedFeature)
    assert str(err) == "unsupported: AscendC::SoftmaxFlashV2 (kernel_src:40) is not modelled by opforge's AscendC emulator"
    host = "/tmp/b/pybind11.cpp:9:30: error: 'class gert::TilingContext' has no member named 'GetInputFormat'\n"
    assert "gert::TilingContext::GetInputFormat (python_bind_src:9)" in str(build_error(host, DISPLAY))


def test_a_type_error_of_the_candidate_is_a_build_error_on_its_line():
    stderr = ("/tmp/b/add_custom_kernel.cpp:45:20: error: no matching function for call to 'Add(LocalTensor<float>&, "
              "LocalTensor<half>&)'\n/tmp/inc/asc_vector.h:10:6: note: candidate: 'template<class T> void Add(...)'\n"
              "/tmp/inc/asc_vector.h:10:6: note:   deduced conflicting types for parameter 'T' ('float' and 'half')\n")
    err = build_error(stderr, DISPLAY)
    assert type(err) is EmuBuildError and str(err).startswith("emu-build: kernel_src:45: error: no matching function")


def test_schedules_that_disagree_are_a_race_naming_the_output_and_schedule():
    a, b = torch.zeros(8), torch.zeros(8)
    compare_schedules("m.f", [TensorBytes.of(a)], [TensorBytes.of(b)], "output", "reverse")  # the same bits: nothing to say
    b[5] = 1.5
    with pytest.raises(RaceError, match=r"^race: .* output 0 of m\.f differs between the forward and reverse "
                                        r"schedules at element 5: 1\.5 vs 0\.0"):
        compare_schedules("m.f", [TensorBytes.of(a)], [TensorBytes.of(b)], "output", "reverse")


def test_the_probe_adds_bitwise_through_tiling_attrs_platform_and_workspace(probe):
    x, y = torch.randn(65536), torch.randn(65536)
    assert torch.equal(probe.add_custom(x, y, 0), x + y)


def test_a_tiling_key_that_skips_the_odd_cores_leaves_their_parts_poisoned(probe):
    x, y = torch.randn(65536), torch.randn(65536)
    z = probe.add_custom(x, y, 2).view(8, -1)  # 8 cores, 8192 elements each
    assert torch.equal(z[0::2], (x + y).view(8, -1)[0::2]) and bool(z[1::2].isnan().all())


def test_a_tiling_func_without_set_block_dim_is_a_host_error(probe):
    with pytest.raises(HostError, match=r"^host-error: EXEC_NPU_CMD\(aclnnAddCustom\) \(python_bind_src:\d+\): "
                                             r"the TilingFunc of AddCustom set no block dimension"):
        probe.add_custom(torch.randn(65536), torch.randn(65536), 3)


def test_a_kernel_dividing_by_a_zero_tile_count_is_a_crash_naming_kernel_and_core_not_a_dead_process(probe):
    with pytest.raises(CrashError, match=r"^crash: an arithmetic fault \(SIGFPE: an integer division by zero\?\) in "
                                         r"kernel add_custom, core \d+ of 8 \(custom_ops_lib\.add_custom, forward"):
        probe.add_custom(torch.randn(65536), torch.randn(65536), 4)
    x, y = torch.randn(65536), torch.randn(65536)
    assert torch.equal(probe.add_custom(x, y, 0), x + y)  # the library still runs the next call


def test_in_place_results_tuples_and_scalars_come_back(probe):
    x, y = torch.randn(65536), torch.randn(65536)
    want, inout = x + y, x.clone()
    assert probe.add_into(inout, y) is inout and torch.equal(inout, want)
    z, zeros = probe.add_pair(x, y)
    assert torch.equal(z, want) and torch.equal(zeros, torch.zeros_like(x))
    assert probe.describe(3, 5.0, True, [1, 2, 3]) == (6, 2.5, False, 3, 48, 196608)  # 910B: 48 AIV, 192 KB UB


def test_torch_check_and_the_opdef_dtypes_refuse_with_their_words(probe):
    x = torch.randn(65536)
    with pytest.raises(HostError, match=r"TORCH_CHECK\(x\.sizes\(\) == y\.sizes\(\)\) failed: shapes differ: "
                                             r"1 vs 2 dimensions"):
        probe.add_pair(x, x.view(256, 256))
    with pytest.raises(HostError, match=r"declares input x as float16, float32 \(OpDef DataType\), and the call "
                                        r"passes bfloat16"):
        probe.add_custom(x.bfloat16(), x.bfloat16(), 0)
    with pytest.raises(HostError, match=r"Tensor::data_ptr \(python_bind_src:\d+\): expected scalar type Int but "
                                        r"found Float"):
        probe.first_bits(x)


def test_a_call_runs_the_build_of_its_dtype_column(probe):
    """project_json_src's first column is float16: a float32 call runs column 1's build (loaded beside
    column 0's), a half call column 0's DTYPE_X = half kernel, computing in float and rounding once."""
    x, y = torch.randn(65536), torch.randn(65536)
    assert torch.equal(probe.add_custom(x, y, 0), x + y)
    assert torch.equal(probe.add_custom(x.half(), y.half(), 0), x.half() + y.half())


def test_atomic_float_sums_may_differ_by_rounding_between_schedules_and_no_more():
    a = torch.tensor([100.0, -3.0, 7.5])
    rounded, wrong = a.clone(), a.clone()
    rounded[0] = torch.nextafter(a[0], torch.tensor(200.0))
    wrong[1] = -2.0
    compare_schedules("m.f", [TensorBytes.of(a)], [TensorBytes.of(rounded)], "output", "reverse", atomics=True)
    with pytest.raises(RaceError, match=r"differs between the forward and reverse schedules at element 0"):
        compare_schedules("m.f", [TensorBytes.of(a)], [TensorBytes.of(rounded)], "output", "reverse")
    with pytest.raises(RaceError, match=r"at element 1: -2\.0 vs -3\.0 \(beyond the rounding of its atomic adds\)"):
        compare_schedules("m.f", [TensorBytes.of(a)], [TensorBytes.of(wrong)], "output", "reverse", atomics=True)


def test_a_pytorch_header_the_shims_lack_stands_for_them_all():
    """A binding may include any PyTorch header (torch/csrc/utils/pybind.h): one
    include/host/ has no file for is generated as the shims as a whole, so the build names an API, not a file."""
    from opforge.backends.ascendc.emulator.build import layout

    text = (DATA / "ascendc" / "mkb_add.py").read_text().replace(
        "#include <torch/library.h>", "#include <torch/library.h>\n#include <torch/csrc/utils/pybind.h>")
    lay = layout(read_project(text))
    assert '#include "opforge_host/all.h"' in lay.headers["torch/csrc/utils/pybind.h"]
    assert "torch/library.h" not in lay.headers  # a shim of its own


def test_a_project_file_named_like_an_emulator_header_is_refused():
    """`#include "kernel_operator.h"` finds a file beside the including one first: a project's own
    kernel_operator.h would replace the emulator's model (its race and bounds checks) with anything."""
    from opforge.backends.ascendc.emulator.build import layout

    text = (DATA / "ascendc" / "direct_add.py").read_text().replace(
        '    "add_custom_tiling.h": r\'\'\'', '    "kernel_operator.h": r\'\'\'#pragma once\n\'\'\',\n    "add_custom_tiling.h": r\'\'\'', 1)
    with pytest.raises(EmuBuildError, match=r"the project's file kernel_operator\.h has the name of a CANN header"):
        layout(read_project(text))
