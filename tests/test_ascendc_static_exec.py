"""The AscendC static rules judge what executes (#34): code under a constant-false condition does not
count, a tiling field set after SaveToBuffer is not set, the unified-buffer plan is summed per kernel,
the operator's declared types and target must be the verification's, forward may not compute with
torch, a TPipe named `pipe` is not the pipe() call, and DataCopyParams.blockLen counts 32-byte blocks.
Each wrong kernel is a one-line change of the correct Add (both candidate forms: opforge's direct
launch, MultiKernelBench's five strings) next to a control that still passes."""
from __future__ import annotations

import pytest

from conftest import DATA
from opforge.backends.ascendc.static import check_ascendc

DIRECT = (DATA / "ascendc" / "direct_add.py").read_text()
MKB = (DATA / "ascendc" / "mkb_add.py").read_text()
FORMS = {"direct": DIRECT, "mkb": MKB}
CONSTS = "constexpr int32_t BUFFER_NUM = 2;"
FREE_X = "inQueueX.FreeTensor(xLocal);"
ENQUE_X = "inQueueX.EnQue(xLocal);"


def changed(source: str, *edits: tuple[str, str]) -> str:
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new, 1)
    return source


def reasons(source: str, **kw) -> list[str]:
    return check_ascendc(source, **kw).reasons


# -- 1. constant conditions are folded before the rules look ---------------------------------------------

HIDDEN = ["if (1 == 0) { %s }", "if constexpr (false) { %s }", "if (!true) %s", "\n#if 0\n%s\n#endif\n",
          "if (kOn) { %s }", "while (0) { %s }", "if (kOn && GetBlockIdx() > 0) { %s }", "\n#if ON - 1\n%s\n#endif\n"]
RUN = ["if (1 == 1) { %s }", "if constexpr (true) { %s } else { }", "\n#if ON\n%s\n#endif\n", "do { %s } while (0);",
       "if (0) { } else %s", "if (GetBlockIdx() >= 0) { %s }", "if (!kOn || 1 > 2) %s"]
FLAGS = CONSTS + "\nconstexpr bool kOn = false;\n#define ON 1"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("wrap", HIDDEN, ids=["eq", "if-constexpr", "not", "pp-if0", "constexpr-bool", "while0", "and",
                                           "pp-macro"])
def test_freetensor_under_a_constant_false_condition_is_not_present(form, wrap):
    found = reasons(changed(FORMS[form], (FREE_X, wrap % FREE_X), (CONSTS, FLAGS)))
    assert found and found[0].startswith("ascendc-queue:") and "inQueueX has 1 AllocTensor but 0 FreeTensor" in found[0]
    assert ("kernel_src:3" if form == "mkb" else "add_custom_kernel.cpp:3") in found[0], found


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("wrap", RUN, ids=["eq", "if-constexpr", "pp-macro", "do-while0", "else", "runtime", "or"])
def test_freetensor_under_a_condition_that_runs_still_counts(form, wrap):
    assert reasons(changed(FORMS[form], (FREE_X, wrap % FREE_X), (CONSTS, FLAGS))) == []


@pytest.mark.parametrize("form", FORMS)
def test_enque_under_a_constant_false_condition_is_not_present(form):
    found = reasons(changed(FORMS[form], (ENQUE_X, f"if (BUFFER_NUM == 3) {{ {ENQUE_X} }}")))
    assert found and "inQueueX has 0 EnQue but 1 DeQue" in found[0], found


RELEASE = "    __aicore__ inline void Release(AscendC::LocalTensor<float> &t) { inQueueX.FreeTensor(t); }\n\nprivate:\n"


@pytest.mark.parametrize("form", FORMS)
def test_freetensor_in_a_method_no_kernel_calls_is_not_present(form):
    source = changed(FORMS[form], ("\nprivate:\n", "\n" + RELEASE), (FREE_X, ""))
    found = reasons(source)
    assert found and "inQueueX has 1 AllocTensor but 0 FreeTensor" in found[0], found
    assert reasons(changed(source, ("inQueueY.FreeTensor(yLocal);", "inQueueY.FreeTensor(yLocal);\n        Release(xLocal);"))) == []


def test_a_call_in_a_constant_false_condition_still_runs():
    freeing = "    __aicore__ inline bool Done(AscendC::LocalTensor<float> &t) { inQueueX.FreeTensor(t); return true; }\n\nprivate:\n"
    source = changed(DIRECT, ("\nprivate:\n", "\n" + freeing), (FREE_X, "if (Done(xLocal) && false) { }"))
    assert reasons(source) == []


def test_a_tiling_assignment_under_a_constant_false_condition_is_not_set():
    set_tile = "tiling.tileNum = tiling.totalLength / BLOCK_DIM / TILE_LENGTH;"
    found = reasons(changed(DIRECT, (set_tile, f"if (BLOCK_DIM < 1) {{ {set_tile} }}")))
    assert found and "AddCustomTilingData.tileNum is never set on the host" in found[0], found
    assert reasons(changed(DIRECT, (set_tile, f"if (BLOCK_DIM >= 1) {{ {set_tile} }}"))) == []
    found = reasons(changed(MKB, ("tiling.set_tileNum(TILE_NUM);", "if constexpr (TILE_NUM == 0) tiling.set_tileNum(TILE_NUM);")))
    assert found and "tileNum is never set" in found[0], found


def test_conditional_compilation_on_a_macro_the_project_does_not_define_is_refused():
    found = reasons(changed(DIRECT, (FREE_X, f"\n#ifdef __CCE_KT_TEST__\n{FREE_X}\n#endif\n")))
    assert any(r.startswith("ascendc-include: #ifdef tests __CCE_KT_TEST__") for r in found), found


# -- 3. the unified-buffer budget is per kernel ---------------------------------------------------------

AUX = '''
constexpr uint32_t AUX_BYTES = {kb} * 1024;
class KernelAux {{
public:
    __aicore__ inline KernelAux() {{}}
    __aicore__ inline void Init() {{ Scratch(pipe, tmp); }}
private:
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> tmp;
}};
'''
HELPER = ("__aicore__ inline void Scratch(AscendC::TPipe &pipe, AscendC::TBuf<AscendC::TPosition::VECCALC> &buf)\n"
          "{\n    pipe.InitBuffer(buf, AUX_BYTES);\n}\n")
ENTRY = "    KernelAdd op;\n"


def two_classes(source: str, kb: int, use: str = "    KernelAux aux;\n    aux.Init();\n" + ENTRY) -> str:
    return changed(source, (CONSTS, CONSTS + AUX.format(kb=kb) + HELPER), (ENTRY, use))


def test_two_classes_of_one_kernel_are_summed_against_192_kb():
    found = reasons(two_classes(DIRECT, 160))  # 48 KB of queues + 160 KB through a helper of a second class
    assert len(found) == 1 and found[0].startswith("ascendc-ub: kernel add_custom's InitBuffer plan takes 212992 bytes "
                                                   "(208 KB)") and "196608" in found[0] and "add_custom_kernel.cpp:" in found[0]
    assert reasons(two_classes(DIRECT, 144)) == []  # 192 KB: fits exactly


def test_classes_in_exclusive_branches_of_the_entry_are_separate_plans():
    branch = "    if (AscendC::GetBlockNum() > 64) {\n        KernelAux aux;\n        aux.Init();\n        return;\n    }\n" + ENTRY
    assert reasons(two_classes(DIRECT, 160, branch)) == []
    either = "    if (AscendC::GetBlockNum() > 64) { KernelAux aux; aux.Init(); } else { KernelAdd op;\n"
    source = two_classes(DIRECT, 160, either)
    assert reasons(changed(source, ("    op.Process();\n}", "    op.Process(); }\n}"))) == []


def test_each_kernel_entry_is_its_own_plan_and_auto_objects_are_followed():
    second = ("extern \"C\" __global__ __aicore__ void aux_custom(GM_ADDR x)\n{\n    KernelAux aux;\n    aux.Init();\n}\n\n"
              "void add_custom_launch(")
    assert reasons(changed(two_classes(DIRECT, 160, ENTRY), ("void add_custom_launch(", second))) == []  # 48 KB and 160 KB
    found = reasons(two_classes(DIRECT, 160, "    auto aux = KernelAux();\n    aux.Init();\n" + ENTRY))
    assert len(found) == 1 and "takes 212992 bytes" in found[0], found


@pytest.mark.parametrize("form", FORMS)
def test_a_known_part_over_the_budget_is_an_error_whatever_the_runtime_sizes(form):
    found = check_ascendc(two_classes(FORMS[form], 200))
    assert len(found.reasons) == 1 and "takes 204800 bytes" in found.reasons[0] if form == "mkb" else \
        "takes 253952 bytes" in found.reasons[0], found.reasons
    assert ("plus 3 run-time-sized buffer(s)" in found.reasons[0]) == (form == "mkb")


def test_one_runtime_sized_buffer_does_not_excuse_a_plan_over_192_kb():
    source = changed(DIRECT, ("constexpr int32_t TILE_LENGTH = 2048;", "constexpr int32_t TILE_LENGTH = 12800;"),
                     ("pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(float));",
                      "pipe.InitBuffer(inQueueX, BUFFER_NUM, this->blockLength * sizeof(float));"))
    found = check_ascendc(source)
    assert len(found.reasons) == 1 and "takes 204800 bytes" in found.reasons[0] and \
        "plus 1 run-time-sized buffer(s)" in found.reasons[0], found.reasons
    control = check_ascendc(changed(source, ("TILE_LENGTH = 12800;", "TILE_LENGTH = 2048;")))
    assert control.reasons == [] and any("could not be checked" in w for w in control.warnings)


# -- 6. a TPipe named `pipe` is not POSIX's pipe() --------------------------------------------------------

@pytest.mark.parametrize("form", FORMS)
def test_a_tpipe_named_pipe_passed_by_reference_is_not_the_pipe_call(form):
    assert reasons(two_classes(FORMS[form], 8)) == []  # Scratch(pipe, tmp): TPipe &pipe
    pointer = changed(FORMS[form], ("    __aicore__ inline void Process()\n    {",
                                    "    __aicore__ inline void Process()\n    {\n        AscendC::TPipe *p = &pipe;\n"
                                    "        AscendC::TPipe &q = pipe;"))
    assert reasons(pointer) == []


@pytest.mark.parametrize("line, words", [("int fds[2];\n    pipe(fds);", "pipe in add_custom_npu: no file"),
                                         ("auto make = pipe;", "pipe in add_custom_npu: a reference"),
                                         ("auto make = &::pipe;", "pipe in add_custom_npu: a reference")],
                         ids=["call", "value", "qualified"])
def test_the_pipe_call_and_a_reference_to_it_are_still_refused(line, words):
    found = reasons(changed(DIRECT, ("    at::Tensor z = at::empty_like(x);", "    at::Tensor z = at::empty_like(x);\n    " + line)))
    assert any(r.startswith("ascendc-forbidden:") and words in r for r in found), found


# -- 2. a tiling field set after the tiling left the host function is not set ------------------------------

SAVE = "    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());\n"
SET_NUM = "    tiling.set_tileNum(TILE_NUM);\n"
LAUNCH = ("    add_custom_launch(BLOCK_DIM, stream, static_cast<uint8_t *>(x.data_ptr()), static_cast<uint8_t *>(y.data_ptr()),\n"
          "                      static_cast<uint8_t *>(z.data_ptr()), tiling);\n")
SET_TILE = "    tiling.tileNum = tiling.totalLength / BLOCK_DIM / TILE_LENGTH;\n"


def test_a_tiling_field_set_after_savetobuffer_is_not_set():
    found = reasons(changed(MKB, (SET_NUM, ""), (SAVE, SAVE + SET_NUM)))
    assert len(found) == 1 and found[0].startswith("ascendc-tiling: tiling field AddCustomTilingData.tileNum is set only "
                                                   "after the tiling was handed on (tiling.set_tileNum at host_operator_src:"), found
    assert "(tiling.set_tileNum at host_operator_src:15, after tiling left TilingFunc at host_operator_src:14): " \
        "the kernel reads 0" in found[0]
    # set before a second SaveToBuffer: the second copy carries it
    assert reasons(changed(MKB, (SET_NUM, ""), (SAVE, SAVE + SET_NUM + SAVE))) == []


def test_a_tiling_field_set_after_the_launch_is_not_set():
    found = reasons(changed(DIRECT, (SET_TILE, ""), (LAUNCH, LAUNCH + SET_TILE)))
    assert len(found) == 1 and "tileNum is set only after the tiling was handed on" in found[0], found
    helper = ("void FillTiling(AddCustomTilingData &t, uint32_t n)\n{\n    t.totalLength = n;\n"
              "    t.tileNum = n / BLOCK_DIM / TILE_LENGTH;\n}\n\nat::Tensor add_custom_npu(")
    source = changed(DIRECT, ("at::Tensor add_custom_npu(", helper), (SET_TILE, ""),
                     ("    tiling.totalLength = static_cast<uint32_t>(x.numel());\n",
                      "    FillTiling(tiling, static_cast<uint32_t>(x.numel()));\n"))
    assert reasons(source) == []  # filled through a reference by a helper, then launched


@pytest.mark.parametrize("form, old, new", [
    ("direct", "op.Init(x, y, z, tiling.totalLength, tiling.tileNum);", "op.Init(x, y, z, tiling.totalLength + tiling.blockSize, tiling.tileNum);"),
    ("mkb", "op.Init(x, y, z, tiling_data.totalLength, tiling_data.tileNum);",
     "op.Init(x, y, z, tiling_data.totalLength, tiling_data.tileNum + tiling_data.blockSize);")], ids=["direct", "mkb"])
def test_a_tiling_field_read_in_the_kernel_that_nothing_declares_or_sets_is_refused(form, old, new):
    found = reasons(changed(FORMS[form], (old, new)))
    assert found == ["ascendc-tiling: the kernel reads tiling field blockSize, which no tiling struct declares "
                     "(AddCustomTilingData): nothing on the host sets it"], found


# -- 5. forward computes nothing with torch ---------------------------------------------------------------

@pytest.mark.parametrize("form, call", [("direct", "add_custom_ops.add_custom(x, y)"), ("mkb", "custom_ops_lib.add_custom(a, b)")],
                         ids=["direct", "mkb"])
@pytest.mark.parametrize("expr, what", [("{call} + {b}", "Add"), ("{call} * 2", "Mult"), ("-{call}", "USub"),
                                        ("torch.add({call}, {b})", "torch.add"), ("{call}.sum()", ".sum()"),
                                        ("abs({call})", "abs()"), ("{call}[{call} > 0]", "comparison")],
                         ids=["add", "mul", "neg", "torch-add", "sum", "abs", "compare"])
def test_forward_that_computes_after_the_kernel_is_refused(form, call, expr, what):
    b = "y" if form == "direct" else "b"
    found = reasons(changed(FORMS[form], (f"return {call}", "return " + expr.format(call=call, b=b))))
    assert any(r.startswith("ascendc-python: ModelNew.forward") and what in r for r in found), found


@pytest.mark.parametrize("form, call", [("direct", "add_custom_ops.add_custom(x, y)"), ("mkb", "custom_ops_lib.add_custom(a, b)")],
                         ids=["direct", "mkb"])
def test_forward_that_computes_on_the_kernels_result_through_a_name_is_refused(form, call):
    found = reasons(changed(FORMS[form], (f"return {call}", f"out = {call}\n        out += out\n        return out")))
    assert any("computes Add= on a tensor" in r for r in found), found


@pytest.mark.parametrize("form, call", [("direct", "add_custom_ops.add_custom(x, y)"), ("mkb", "custom_ops_lib.add_custom(a, b)")],
                         ids=["direct", "mkb"])
def test_forward_may_reshape_allocate_and_compute_sizes(form, call):
    x = "x" if form == "direct" else "a"
    body = (f"assert {x} is not None and {x}.dim() >= 1\n        n = {x}.numel() // 2 * 2\n        flat = {x}.reshape(-1).contiguous()\n        scratch = torch.empty_like(flat)\n"
            f"        out = {call}\n        return out.view({x}.size(0), -1).reshape({x}.shape)")
    assert reasons(changed(FORMS[form], (f"return {call}", body))) == []


# -- 4. the operator is built for the verification's types and target ----------------------------------

JSON_X = '{"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]}'
OPDEF_Z = 'this->Output("z").ParamType(REQUIRED).DataType({ge::DT_FLOAT})'


@pytest.mark.parametrize("old, new, words", [
    (JSON_X, JSON_X.replace('["float"]', '["float16"]'), 'project_json_src declares x as float16'),
    (OPDEF_Z, OPDEF_Z.replace("DT_FLOAT}", "DT_BF16}"), 'the OpDef\'s Output("z") takes ge::DT_BF16 only'),
], ids=["json", "opdef"])
def test_a_float32_spec_refuses_an_operator_declared_half_width(old, new, words):
    found = reasons(changed(MKB, (old, new)), float32_spec=True)
    assert any(r.startswith("ascendc-dtype:") and words in r for r in found), found
    assert reasons(changed(MKB, (old, new)), float32_spec=False) == []  # a float16 spec: that is its type
    both = changed(MKB, (old, new.replace('["float16"]', '["float16", "float"]').replace("DT_BF16}", "DT_BF16, ge::DT_FLOAT}")))
    assert reasons(both, float32_spec=True) == []  # float32 among the declared types


def test_a_direct_kernel_reading_a_float32_spec_as_half_is_refused():
    source = changed(DIRECT, ("AscendC::GlobalTensor<float> xGm;", "AscendC::GlobalTensor<half> xGm;"))
    found = reasons(source, float32_spec=True)
    assert any(r.startswith("ascendc-dtype: GlobalTensor<half> in a float32 op") and "add_custom_kernel.cpp:" in r
               for r in found), found
    assert reasons(DIRECT, float32_spec=True) == [] and reasons(MKB, float32_spec=True) == []


def test_an_opdef_registered_only_for_another_soc_is_refused():
    config = 'this->AICore().AddConfig("ascend910b");'
    found = reasons(changed(MKB, (config, 'this->AICore().AddConfig("ascend310p");')))
    assert found == ["ascendc-target: the OpDef registers the operator for ascend310p only (AddConfig at "
                     "host_operator_src:41); opforge verifies for ascend910b (Atlas A2), where it would not be found"], found
    assert reasons(changed(MKB, (config, config + '\n        this->AICore().AddConfig("ascend310p");'))) == []


# -- 7. DataCopyParams.blockLen counts 32-byte blocks ---------------------------------------------------

COPY_D = "AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], TILE_LENGTH);"
COPY_M = "AscendC::DataCopy(xLocal, xGm[progress * this->tileLength], this->tileLength);"
PARAMS = "AscendC::DataCopyParams p{{1, {len}, 0, 0}};\n        AscendC::DataCopy(xLocal, {src}, p);"


@pytest.mark.parametrize("new, words", [
    (PARAMS.format(len="TILE_LENGTH * sizeof(float)", src="xGm[progress * TILE_LENGTH]"),
     "`TILE_LENGTH * sizeof ( float )` is a byte count (= 8192: DataCopy moves 1 x 8192 blocks x 32 = 262144 bytes, "
     "the local buffer holds 8192)"),
    ("AscendC::DataCopyParams p;\n        p.blockLen = TILE_LENGTH * sizeof(float);\n"
     "        AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], p);", "= 8192: DataCopy moves"),
    ("AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], {2, TILE_LENGTH * sizeof(float) / 32, 0, 0});",
     "moves 2 x 256 blocks x 32 = 16384 bytes, but the local buffer holds 8192"),
], ids=["bytes", "bytes-field", "past-buffer"])
def test_a_blocklen_in_bytes_or_past_the_buffer_is_refused(new, words):
    found = reasons(changed(DIRECT, (COPY_D, new)))
    assert len(found) == 1 and found[0].startswith("ascendc-datacopy:") and words in found[0] and \
        "add_custom_kernel.cpp:3" in found[0], found


def test_a_blocklen_in_bytes_is_refused_in_multikernelbench_form_too():
    new = PARAMS.format(len="static_cast<uint16_t>(this->tileLength * sizeof(DTYPE_X))", src="xGm[progress * this->tileLength]")
    found = reasons(changed(MKB, (COPY_M, new)))
    assert len(found) == 1 and "is a byte count: a 32x overrun" in found[0] and "(kernel_src:36)" in found[0], found


@pytest.mark.parametrize("form, old, new", [
    ("direct", COPY_D, PARAMS.format(len="TILE_LENGTH * sizeof(float) / 32", src="xGm[progress * TILE_LENGTH]")),
    ("direct", COPY_D, "AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], AscendC::DataCopyParams{1, 256, 0, 0});"),
    ("direct", COPY_D, "AscendC::DataCopyExtParams p{1, TILE_LENGTH * sizeof(float), 0, 0, 0};\n"
                       "        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};\n"
                       "        AscendC::DataCopyPad(xLocal, xGm[progress * TILE_LENGTH], p, pad);"),
    ("mkb", COPY_M, PARAMS.format(len="static_cast<uint16_t>(this->tileLength * sizeof(DTYPE_X) / 32)",
                                  src="xGm[progress * this->tileLength]")),
], ids=["blocks", "inline", "datacopypad-bytes", "mkb-blocks"])
def test_a_blocklen_in_blocks_and_datacopypad_bytes_pass(form, old, new):
    assert reasons(changed(FORMS[form], (old, new))) == []


@pytest.mark.parametrize("include", ['%:include "/etc/passwd"', '#inc\\\nlude "/etc/passwd"', "#pragma GCC dependency \"/etc/passwd\""],
                         ids=["digraph", "spliced", "dependency"])
def test_the_preprocessor_never_reads_a_file_the_candidate_names(include):
    found = check_ascendc(changed(DIRECT, (FREE_X, f"\n#if 1\n{FREE_X}\n#endif\n{include}\n")))
    assert not any("root:" in r for r in found.reasons + found.warnings)
    assert any("was not run through g++ -E" in w for w in found.warnings), found.warnings
    assert any(r.startswith("ascendc-include:") for r in found.reasons), found.reasons


HELPER_PY = '''

def finish(t, scale):
    return t * scale
'''


@pytest.mark.parametrize("form, call", [("direct", "add_custom_ops.add_custom(x, y)"), ("mkb", "custom_ops_lib.add_custom(a, b)")],
                         ids=["direct", "mkb"])
def test_forward_that_computes_through_a_helper_is_refused(form, call):
    method = f"return self.post({call})\n\n    def post(self, out):\n        return out + 1"
    found = reasons(changed(FORMS[form], (f"return {call}", method)))
    assert any("ModelNew.forward (through post) computes Add on a tensor" in r for r in found), found
    found = reasons(changed(FORMS[form], (f"return {call}", f"return finish({call}, 2)"), ("\n\nclass ModelNew", HELPER_PY + "\n\nclass ModelNew")))
    assert any("ModelNew.forward (through finish) computes Mult on a tensor" in r for r in found), found
    sizes = f"return {call}.view(self.rows(x if True else x))\n\n    def rows(self, t):\n        return t.size(0) * 2, -1"
    sizes = sizes.replace("x if True else x", "a" if form == "mkb" else "x")
    assert reasons(changed(FORMS[form], (f"return {call}", sizes))) == []


@pytest.mark.parametrize("body", [
    "if (tiling.tileNum == 0) { }" + "".join(f" else if (tiling.tileNum == {i}) {{ }}" for i in range(1, 2000)),
    "if (1 == 0) { }" + "".join(f" else if ({i} == 0) {{ }}" for i in range(1, 2000)),
    "".join(f"if ({i} > 0) " for i in range(1, 2000)) + "{ }"], ids=["runtime-chain", "constant-chain", "nested"])
def test_long_condition_chains_are_read_in_one_pass_or_refused_with_one_reason(body):
    found = reasons(changed(DIRECT, (ENTRY, "    " + body + "\n" + ENTRY)))
    assert found == [] or len(found) == 1 and found[0].startswith("ascendc-format:"), found


def test_the_aclrt_launch_kernel_form_is_a_launch_and_must_agree_with_the_kernel():
    chevron = "add_custom<<<blockDim, nullptr, stream>>>(x, y, z, tiling);"
    assert reasons(changed(DIRECT, (chevron, "ACLRT_LAUNCH_KERNEL(add_custom)(blockDim, stream, x, y, z, tiling);"))) == []
    found = reasons(changed(DIRECT, (chevron, "ACLRT_LAUNCH_KERNEL(add_custom)(blockDim, stream, x, y, z);")))
    assert any("launches add_custom with 3 arguments, but add_custom takes 4" in r for r in found), found


@pytest.mark.parametrize("form", FORMS)
def test_a_tiling_field_set_only_in_a_helper_nothing_calls_is_not_set(form):
    if form == "mkb":
        helper, anchor, removed, call = ("static void Fill(AddCustomTilingData &t)\n{\n    t.set_tileNum(TILE_NUM);\n}\n"
                                         "static ge::graphStatus TilingFunc("), "static ge::graphStatus TilingFunc(", SET_NUM, \
            "    Fill(tiling);\n"
    else:
        helper, anchor, removed, call = ("void Fill(AddCustomTilingData &t)\n{\n    t.tileNum = t.totalLength / BLOCK_DIM / TILE_LENGTH;\n}\n\n"
                                         "at::Tensor add_custom_npu("), "at::Tensor add_custom_npu(", SET_TILE, "    Fill(tiling);\n"
    source = changed(FORMS[form], (anchor, helper), (removed, ""))
    found = reasons(source)
    assert found and "AddCustomTilingData.tileNum is never set on the host" in found[0], found
    save_or_launch = SAVE if form == "mkb" else LAUNCH
    assert reasons(changed(source, (save_or_launch, call + save_or_launch))) == []


@pytest.mark.parametrize("wrap, runs", [("switch (BUFFER_NUM) { case 3: %s break; }", False),
                                        ("switch (BUFFER_NUM) { case 1: break; case 2: %s break; }", True),
                                        ("switch (0) { case 1: break; default: %s }", True),
                                        ("switch (progress) { case 1: break; default: %s }", True)],
                         ids=["no-case", "case", "default", "runtime"])
def test_a_switch_on_a_constant_runs_only_its_case(wrap, runs):
    found = reasons(changed(DIRECT, (FREE_X, wrap % FREE_X)))
    assert (found == []) == runs, found
    assert runs or "inQueueX has 1 AllocTensor but 0 FreeTensor" in found[0]


@pytest.mark.parametrize("wrap, runs", [("BUFFER_NUM == 3 ? %s : (void)0;", False), ("false && (%s, true);", False),
                                        ("true || (%s, true);", False), ("BUFFER_NUM == 2 ? %s : (void)0;", True),
                                        ("true && (%s, true);", True), ("progress >= 0 ? %s : (void)0;", True)],
                         ids=["ternary-false", "and-false", "or-true", "ternary-true", "and-true", "runtime"])
def test_a_constant_ternary_or_short_circuit_statement_runs_only_what_it_runs(wrap, runs):
    found = reasons(changed(DIRECT, (FREE_X, wrap % FREE_X[:-1])))
    assert (found == []) == runs, found
    assert runs or "inQueueX has 1 AllocTensor but 0 FreeTensor" in found[0]
