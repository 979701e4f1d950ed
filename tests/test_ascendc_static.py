"""The AscendC static checks, rule by rule: each passes a correct Add project (both forms) and refuses
a one-line change that breaks it, with the reason code and the project file and line. Hostile inputs
(huge strings, 10,000 files, non-strings, /etc/passwd, macro bombs, C++ that is not C++) get one
clear reason and never a traceback. No CANN needed: nothing here compiles or runs."""
from __future__ import annotations

import pytest

from conftest import DATA
from opforge.backends.ascendc import api
from opforge.backends.ascendc.fold import evaluate
from opforge.backends.ascendc.static import check_ascendc
from opforge.backends.cuda.cxx import tokenize

DIRECT = (DATA / "ascendc" / "direct_add.py").read_text()
MKB = (DATA / "ascendc" / "mkb_add.py").read_text()
KERNEL_ADD = "AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);"


def changed(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new, 1)


def reasons(source: str) -> list[str]:
    return check_ascendc(source).reasons


def only(source: str, code: str) -> str:
    found = reasons(source)
    assert found and all(r.startswith(code) for r in found), found
    return found[0]


# -- the correct projects -----------------------------------------------------------------------------

def test_the_direct_launch_add_passes_with_every_size_known():
    found = check_ascendc(DIRECT)
    assert found.reasons == [] and found.warnings == [] and found.kernels == ["add_custom"]
    assert found.project.form == "direct" and found.project.modules == {"add_custom_ops"}


def test_the_multikernelbench_add_passes_and_says_what_it_could_not_size():
    found = check_ascendc(MKB)
    assert found.reasons == [] and found.project.form == "multikernelbench"
    assert any(w.startswith("ascendc-ub:") and "could not be checked" in w for w in found.warnings)
    assert any(w.startswith("ascendc-datacopy:") for w in found.warnings)


def test_multikernelbench_datacopypad_and_platform_queries_pass():
    """The constructs of MultiKernelBench's published AddCustom answer: DataCopyPad with ext params,
    the platform's UB size query, std::min on the host and a TORCH_LIBRARY_IMPL beside pybind."""
    source = changed(MKB, "AscendC::DataCopy(xLocal, xGm[progress * this->tileLength], this->tileLength);",
                     "AscendC::DataCopyExtParams p{1, static_cast<uint32_t>(this->tileLength * sizeof(DTYPE_X)), 0, 0, 0};\n"
                     "        AscendC::DataCopyPadExtParams<DTYPE_X> pad{false, 0, 0, 0};\n"
                     "        AscendC::DataCopyPad(xLocal, xGm[progress * this->tileLength], p, pad);")
    source = changed(source, "    context->SetBlockDim(BLOCK_DIM);",
                     "    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());\n"
                     "    uint64_t ub = 0;\n    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);\n"
                     "    context->SetBlockDim(std::min(platform.GetCoreNumAiv(), BLOCK_DIM));")
    source = changed(source, '#include "register/op_def_registry.h"',
                     '#include <algorithm>\n#include "tiling/platform/platform_ascendc.h"\n#include "register/op_def_registry.h"')
    source = changed(source, "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)",
                     'TORCH_LIBRARY_IMPL(myops, PrivateUse1, m)\n{\n    m.impl("add_custom", &add_custom_impl_npu);\n}\n\n'
                     "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)")
    assert reasons(source) == []


def test_the_experts_ascendc_output_passes():
    from opforge.codegen import generate
    from opforge.harness.spec import load_spec

    spec = load_spec(DATA.parent.parent / "ops" / "silu.py", max_elements=1 << 19, max_bytes=2 << 30)
    kernel = generate(spec.path.read_text(), spec.name, spec.sizes_used, backend="ascendc")
    assert reasons(kernel.render(kernel.space[0])) == []


# -- unified buffer -----------------------------------------------------------------------------------

def test_a_300_kb_ub_plan_is_refused_with_its_size():
    reason = only(changed(DIRECT, "TILE_LENGTH = 2048;", "TILE_LENGTH = 12800;"), "ascendc-ub:")
    assert "307200 bytes" in reason and "196608" in reason and "add_custom_kernel.cpp:" in reason


def test_ub_sizes_fold_through_defines_and_buffer_num():
    # 3 queues x BUFFER_NUM 2 x TILE_LENGTH floats: 9216 -> 221184 bytes (over); 8192 -> 196608 (exactly fits)
    over = changed(DIRECT, "constexpr int32_t TILE_LENGTH = 2048;", "#define TILE_LENGTH (1024 * 9)")
    assert "221184 bytes" in only(over, "ascendc-ub:")
    assert reasons(changed(DIRECT, "constexpr int32_t TILE_LENGTH = 2048;", "#define TILE_LENGTH (1024 * 8)")) == []
    triple = changed(DIRECT, "constexpr int32_t BUFFER_NUM = 2;", "constexpr int32_t BUFFER_NUM = 5;")
    assert "245760 bytes" in only(changed(triple, "TILE_LENGTH = 2048;", "TILE_LENGTH = 4096;"), "ascendc-ub:")


def test_a_ub_size_from_runtime_values_is_a_warning_not_a_guess():
    source = changed(DIRECT, "pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(float));",
                     "pipe.InitBuffer(inQueueX, BUFFER_NUM, this->blockLength * sizeof(float));")
    found = check_ascendc(source)
    assert found.reasons == [] and any("InitBuffer(inQueueX" in w for w in found.warnings)


# -- DataCopy ------------------------------------------------------------------------------------------

def test_a_100_byte_datacopy_is_refused():
    source = changed(DIRECT, "AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], TILE_LENGTH);",
                     "AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], 25);")
    reason = only(source, "ascendc-datacopy:")
    assert "100 bytes" in reason and "DataCopyPad" in reason and "add_custom_kernel.cpp:36" in reason


def test_datacopy_alignment_uses_the_element_type():
    half = changed(DIRECT, "AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], TILE_LENGTH);",
                   "AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], 8);")
    assert reasons(half) == []  # 8 floats: 32 bytes
    assert "ascendc-datacopy" in reasons(half.replace("xGm[progress * TILE_LENGTH], 8)", "xGm[progress * TILE_LENGTH], 12)"))[0]


# -- queues --------------------------------------------------------------------------------------------

def test_an_alloc_without_free_is_refused():
    reason = only(changed(DIRECT, "inQueueX.FreeTensor(xLocal);", ""), "ascendc-queue:")
    assert "inQueueX has 1 AllocTensor but 0 FreeTensor" in reason


def test_an_enque_without_deque_is_refused():
    reason = only(changed(DIRECT, "AscendC::LocalTensor<float> zLocal = outQueueZ.DeQue<float>();",
                          "AscendC::LocalTensor<float> zLocal = outQueueZ.AllocTensor<float>();\n        outQueueZ.FreeTensor(zLocal);"),
                  "ascendc-queue:")
    assert "outQueueZ has 1 EnQue but 0 DeQue" in reason


def test_a_queue_without_initbuffer_is_refused():
    reason = only(changed(DIRECT, "pipe.InitBuffer(inQueueY, BUFFER_NUM, TILE_LENGTH * sizeof(float));", ""), "ascendc-queue:")
    assert "inQueueY is used but never given memory" in reason


# -- tiling --------------------------------------------------------------------------------------------

def test_a_tiling_field_never_set_on_the_host_is_refused():
    reason = only(changed(DIRECT, "tiling.tileNum = tiling.totalLength / BLOCK_DIM / TILE_LENGTH;", ""), "ascendc-tiling:")
    assert "AddCustomTilingData.tileNum is never set on the host" in reason


def test_a_tiling_field_never_read_in_the_kernel_is_a_warning_even_if_a_member_shares_its_name():
    source = changed(DIRECT, "op.Init(x, y, z, tiling.totalLength, tiling.tileNum);", "op.Init(x, y, z, tiling.totalLength, 8);")
    found = check_ascendc(source)  # unread, it changes nothing the kernel computes: the emulator judges the values
    assert found.reasons == [] and any("AddCustomTilingData.tileNum is never read in the kernel" in w for w in found.warnings)


def test_a_brace_initialised_tiling_struct_counts_as_set():
    source = changed(DIRECT, "    AddCustomTilingData tiling;\n    tiling.totalLength = static_cast<uint32_t>(x.numel());\n"
                             "    tiling.tileNum = tiling.totalLength / BLOCK_DIM / TILE_LENGTH;\n",
                     "    uint32_t n = static_cast<uint32_t>(x.numel());\n    AddCustomTilingData tiling{n, n / BLOCK_DIM / TILE_LENGTH};\n")
    assert reasons(source) == []


def test_multikernelbench_tiling_fields_must_be_set_with_set_and_read():
    assert "AddCustomTilingData.tileNum is never set" in only(changed(MKB, "tiling.set_tileNum(TILE_NUM);", ""), "ascendc-tiling:")
    source = changed(MKB, "op.Init(x, y, z, tiling_data.totalLength, tiling_data.tileNum);", "op.Init(x, y, z, tiling_data.totalLength, 8);")
    assert reasons(source) == [] and any("tileNum is never read" in w for w in check_ascendc(source).warnings)


# -- API table, system calls, includes ----------------------------------------------------------------

def test_an_api_outside_the_table_is_refused():
    reason = only(changed(DIRECT, KERNEL_ADD, "AscendC::MagicAdd(zLocal, xLocal, yLocal, TILE_LENGTH);"), "ascendc-api:")
    assert "AscendC::MagicAdd" in reason and "add_custom_kernel.cpp:46" in reason


@pytest.mark.parametrize("name", ["Exp", "Muls", "ReduceSum", "WholeReduceMax", "BlockReduceSum", "Cast", "PipeBarrier"])
def test_the_table_holds_the_documented_vector_reduction_and_sync_apis(name):
    assert api.is_ascendc_name(f"AscendC::{name}")


@pytest.mark.parametrize("call, code", [('fopen("/etc/passwd", "r");', "ascendc-forbidden"),
                                        ('printf("%d", 1);', "ascendc-forbidden"),
                                        ("std::vector<float> v;", "ascendc-forbidden"),
                                        ('asm("nop");', "ascendc-forbidden")])
def test_host_and_system_calls_are_refused_in_kernel_code(call, code):
    assert reasons(changed(DIRECT, KERNEL_ADD, call + " " + KERNEL_ADD))[0].startswith(code)


def test_environment_and_file_calls_are_refused_in_host_code_too():
    reason = only(changed(DIRECT, "at::Tensor z = at::empty_like(x);", 'at::Tensor z = at::empty_like(x);\n    system("id");'),
                  "ascendc-forbidden:")
    assert "system in add_custom_npu" in reason and "add_custom_host.cpp:" in reason


@pytest.mark.parametrize("include", ['#include "/etc/passwd"', "#include </etc/passwd>", '#include "../secret.h"',
                                     "#include <../../etc/shadow>", "#include_next <cstdint>", "#embed \"/etc/passwd\""])
def test_includes_outside_the_project_cann_and_cxx_are_refused(include):
    source = changed(DIRECT, '#include "kernel_operator.h"', include + '\n#include "kernel_operator.h"')
    assert only(source, "ascendc-include:").endswith("(add_custom_kernel.cpp:2)")


# -- agreement of the parts ----------------------------------------------------------------------------

@pytest.mark.parametrize("old, new, words", [
    ("add_custom<<<blockDim, nullptr, stream>>>(x, y, z, tiling);", "add_custom<<<blockDim, nullptr, stream>>>(x, y, z);",
     "with 3 arguments, but add_custom takes 4"),
    ("add_custom<<<blockDim, nullptr, stream>>>", "add_custom<<<blockDim, stream>>>", "2 values in <<<...>>>"),
    ("add_custom<<<blockDim, nullptr, stream>>>(x, y, z, tiling);", "add_kernel<<<blockDim, nullptr, stream>>>(x, y, z, tiling);",
     "launches add_kernel, which is not a kernel"),
    ("    add_custom_launch(BLOCK_DIM, stream, ", "    add_custom_launch(stream, ", "calls launcher add_custom_launch with 5 arguments"),
    ("return add_custom_ops.add_custom(x, y)", "return add_custom_ops.add_custom(x)", "with 1 arguments, but its implementation"),
    ("return add_custom_ops.add_custom(x, y)", "return add_custom_ops.add(x, y)", "which the binding does not define"),
    ("PYBIND11_MODULE(add_custom_ops, m)", "PYBIND11_MODULE(other_ops, m)", "ModelNew imports add_custom_ops, which the project does not build"),
])
def test_kernel_launcher_binding_and_forward_must_agree(old, new, words):
    assert words in only(changed(DIRECT, old, new), "ascendc-signature:")


@pytest.mark.parametrize("old, new, words", [
    ("GM_ADDR z, GM_ADDR workspace", "GM_ADDR z", "takes 4 parameters; operator AddCustom needs 5"),
    ("EXEC_NPU_CMD(aclnnAddCustom, self, other, result);", "EXEC_NPU_CMD(aclnnAddCustom, self, result);", "passes 2"),
    ("EXEC_NPU_CMD(aclnnAddCustom,", "EXEC_NPU_CMD(aclnnSubCustom,", "not aclnnAddCustom"),
    ('this->Input("y")', 'this->Input("w")', "Inputs ['x', 'w'] differ"),
    ("OP_ADD(AddCustom);", "OP_ADD(SubCustom);", "never registers AddCustom"),
    ("custom_ops_lib.add_custom(a, b)", "custom_ops_lib.add_custom(a)", "with 1 arguments"),
])
def test_multikernelbench_parts_must_agree(old, new, words):
    assert words in only(changed(MKB, old, new), "ascendc-signature:")


def test_forward_may_not_compute_with_torch():
    found = reasons(changed(DIRECT, "return add_custom_ops.add_custom(x, y)", "return add_custom_ops.add_custom(x, y).relu()"))
    assert found == ["ascendc-python: ModelNew.forward calls .relu() (line 133); only shape methods "
                     "(broadcast_to, contiguous, dim, expand, expand_as, flatten, is_contiguous, new_empty, numel, "
                     "reshape, size, squeeze, stride, unsqueeze, view) and the project's binding"]
    assert reasons(changed(DIRECT, "import torch\n", "import torch\nimport torch.nn.functional as F\n"))[0].startswith(
        "ascendc-python: import of torch.nn.functional")


# -- hostile inputs: one reason, no traceback ---------------------------------------------------------

HOSTILE = {
    "huge string": DIRECT.replace("ASCENDC_SOURCES = {", "ASCENDC_SOURCES = {'big.h': '" + "x" * 300_000 + "',", 1),
    "huge file": "x = 1\n" * 400_000,
    "10,000 files": "ASCENDC_SOURCES = {" + ", ".join(f"'f{i}.h': ''" for i in range(10_000)) + "}\n",
    "non-string value": "ASCENDC_SOURCES = {'a.cpp': 42}\n",
    "computed value": "ASCENDC_SOURCES = {'a.cpp': open('/etc/passwd').read()}\n",
    "not a dict": "ASCENDC_SOURCES = dict(a='b')\n",
    "path as file name": "ASCENDC_SOURCES = {'../../etc/x.cpp': ''}\n",
    "cmake file": "ASCENDC_SOURCES = {'CMakeLists.txt': 'execute_process(COMMAND id)'}\n",
    "bound twice": DIRECT + "\nASCENDC_SOURCES = {}\n",
    "both forms": DIRECT + "\nkernel_src = ''\n",
    "neither form": "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n",
    "python syntax": DIRECT + "\n def (\n",
    "not C++": DIRECT.replace("    __aicore__ inline void Process()\n    {", "    __aicore__ inline void Process()\n    {{", 1),
    "unterminated string": DIRECT.replace('#include "kernel_operator.h"', '#include "kernel_operator.h\n', 1),
    "macro bomb": DIRECT.replace("constexpr int32_t BUFFER_NUM = 2;", "#define A0 x x\n" + "\n".join(
        f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, 40)) + "\nconstexpr int32_t BUFFER_NUM = 2; int A39;", 1),
    "nul byte": DIRECT.replace("constexpr int32_t BUFFER_NUM", "\\x00constexpr int32_t BUFFER_NUM", 1),
    "bad json": MKB.replace('"op": "AddCustom",', '"op": "AddCustom"', 1),
    "json not a list": MKB.replace(MKB[MKB.index("project_json_src = '''") + 22:MKB.index("'''\n\nhost_tiling_src")], "7"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_inputs_get_one_clear_reason(name):
    found = reasons(HOSTILE[name])
    assert len(found) == 1 and found[0].split(":")[0] in ("ascendc-format", "syntax-error"), found
    assert "\n" not in found[0] and len(found[0]) < 400


def test_a_deeply_nested_kernel_and_a_shift_bomb_are_read_without_harm():
    nested = DIRECT.replace("    __aicore__ inline void Process()\n    {", "    __aicore__ inline void Process()\n    {"
                            + "{" * 3000 + "}" * 3000, 1)
    assert reasons(nested) == []
    bomb = check_ascendc(DIRECT.replace("TILE_LENGTH = 2048;", "TILE_LENGTH = 1 << (1 << 40);", 1))
    assert bomb.reasons == [] and any("could not be checked" in w for w in bomb.warnings)


def test_the_folder_knows_sizeof_casts_and_refuses_unknowns():
    table = {"N": 2048, "BUFFER_NUM": 2}
    assert evaluate(tokenize("BUFFER_NUM * N * sizeof(half)"), table) == 8192
    assert evaluate(tokenize("static_cast<uint32_t>(N) / 3 + (uint32_t)1"), table) == 683
    assert evaluate(tokenize("this->n * 4"), table) is None and evaluate(tokenize("N / 0"), table) is None


def test_kernel_code_may_use_std_type_traits_but_no_host_library():
    """`std::is_same_v` in kernel code is a compile-time constant (Huawei's templated samples dispatch on the dtype
    with it); `std::vector` is a host library."""
    src = DIRECT
    trait = src.replace("this->tileNum = tileNum;", "this->tileNum = tileNum; if (std::is_same_v<float, float>) {}")
    library = src.replace("this->tileNum = tileNum;", "this->tileNum = tileNum; std::vector<int> v;")
    assert check_ascendc(trait).reasons == []
    assert any("std::vector in kernel code" in r for r in check_ascendc(library).reasons)
