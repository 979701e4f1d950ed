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
@pytest.mark.parametrize("wrap", HIDDEN)
def test_freetensor_under_a_constant_false_condition_is_not_present(form, wrap):
    found = reasons(changed(FORMS[form], (FREE_X, wrap % FREE_X), (CONSTS, FLAGS)))
    assert found and found[0].startswith("ascendc-queue:") and "inQueueX has 1 AllocTensor but 0 FreeTensor" in found[0]
    assert ("kernel_src:3" if form == "mkb" else "add_custom_kernel.cpp:3") in found[0], found


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("wrap", RUN)
def test_freetensor_under_a_condition_that_runs_still_counts(form, wrap):
    assert reasons(changed(FORMS[form], (FREE_X, wrap % FREE_X), (CONSTS, FLAGS))) == []


@pytest.mark.parametrize("form", FORMS)
def test_enque_under_a_constant_false_condition_is_not_present(form):
    found = reasons(changed(FORMS[form], (ENQUE_X, f"if (BUFFER_NUM == 3) {{ {ENQUE_X} }}")))
    assert found and "inQueueX has 0 EnQue but 1 DeQue" in found[0], found


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
