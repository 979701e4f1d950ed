"""Hostile AscendC projects against the static checks (no CANN here, so a project that passes them
exits 3 and one that breaks a rule exits 1): hiding a unified-buffer size or a DataCopy length from
the constant folder (constexpr functions, templates, ternaries, const members), hiding code from the
compiler but not from the checks (#if 0, `if (false)`), unbalancing a queue on one path (an early
return) or the plan in a loop, and reaching system calls without calling them by name. Each one-line
change is made to the correct direct-launch Add (tests/data/ascendc/direct_add.py); three complete
candidates (tests/data/hostile_ascend/ascendc_*.py) go through `opforge verify` end to end."""
from __future__ import annotations

import pytest

from conftest import DATA
from opforge.harness import ladder
from opforge.backends.ascendc.static import check_ascendc
from opforge.harness.verify import VerifyOptions, verify

DIRECT = (DATA / "ascendc" / "direct_add.py").read_text()
HOSTILE = DATA / "hostile_ascend"
SPEC = DATA / "ascendc" / "add_spec.py"
INIT_X = "pipe.InitBuffer(inQueueX, BUFFER_NUM, TILE_LENGTH * sizeof(float));"
COPY_X = "AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], TILE_LENGTH);"
CONSTS = "constexpr int32_t BUFFER_NUM = 2;"
HOST = "    at::Tensor z = at::empty_like(x);"
SET_TILE = "    tiling.tileNum = tiling.totalLength / BLOCK_DIM / TILE_LENGTH;"


def changed(*edits: tuple[str, str]) -> str:
    source = DIRECT
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new, 1)
    return source


# name, edits, reason code, text the reason must contain
CASES = [
    ("ub constexpr function", [(INIT_X, "pipe.InitBuffer(inQueueX, BUFFER_NUM, XBytes());"),
                               (CONSTS, CONSTS + "\n__aicore__ constexpr uint32_t XBytes() { return 300 * 1024; }")],
     "ascendc-ub", "XBytes ( )"),
    ("ub template constant", [(INIT_X, "pipe.InitBuffer(inQueueX, BUFFER_NUM, Bytes<300 * 1024>::value);"),
                              (CONSTS, CONSTS + "\ntemplate <uint32_t N> struct Bytes { static constexpr uint32_t value = N; };")],
     "ascendc-ub", "Bytes <"),
    ("ub ternary", [(INIT_X, "pipe.InitBuffer(inQueueX, BUFFER_NUM, sizeof(float) > 2 ? 300 * 1024 : 8);")],
     "ascendc-ub", "647168 bytes"),
    ("ub const member", [(INIT_X, "pipe.InitBuffer(inQueueX, BUFFER_NUM, this->xBytes);"),
                         ("    uint32_t blockLength;", "    const uint32_t xBytes = 300 * 1024;\n    uint32_t blockLength;")],
     "ascendc-ub", "this -> xBytes"),
    ("ub constant through a constexpr function", [(INIT_X, "pipe.InitBuffer(inQueueX, BUFFER_NUM, X_BYTES);"),
                                                   (CONSTS, CONSTS + "\n__aicore__ constexpr uint32_t XBytes() { return 300 * 1024; }"
                                                    "\nconstexpr uint32_t X_BYTES = XBytes();")],
     "ascendc-ub", "X_BYTES"),
    ("ub in a loop", [(INIT_X, "for (int i = 0; i < 40; i++) { " + INIT_X + " }")], "ascendc-ub", "in a loop"),
    ("datacopy constexpr function", [(COPY_X, "AscendC::DataCopy(xLocal, xGm[progress * TILE_LENGTH], Len());"),
                                     (CONSTS, CONSTS + "\n__aicore__ constexpr int32_t Len() { return 25; }")],
     "ascendc-datacopy", "Len ( )"),
    ("queue early return", [("        AscendC::LocalTensor<float> zLocal = outQueueZ.DeQue<float>();",
                             "        AscendC::LocalTensor<float> zLocal = outQueueZ.DeQue<float>();\n"
                             "        if (progress > 0) { return; }")],
     "ascendc-queue", "a return in CopyOut before outQueueZ.FreeTensor"),
    ("tiling under if (false)", [(SET_TILE, "    if (false) { " + SET_TILE.strip() + " }")], "ascendc-tiling", "tileNum is never set"),
    ("tiling under #if 0", [(SET_TILE, "#if 0\n" + SET_TILE + "\n#endif")], "ascendc-tiling", "tileNum is never set"),
    ("__has_include probe", [('#include "add_custom_tiling.h"\n\nconstexpr',
                              '#if __has_include("/etc/passwd")\n#endif\n#include "add_custom_tiling.h"\n\nconstexpr')],
     "ascendc-include", "__has_include"),
    ("system through a pointer", [(HOST, HOST + "\n    auto run = &::system;\n    run(\"id\");")],
     "ascendc-forbidden", "a reference to"),
    ("popen assigned", [(HOST, HOST + "\n    FILE *(*p)(const char *, const char *) = popen;")],
     "ascendc-forbidden", "popen"),
    ("std::system passed", [(HOST, HOST + "\n    std::function<int(const char *)> f(std::system);")],
     "ascendc-forbidden", "system"),
]


@pytest.mark.parametrize("name, edits, code, text", CASES, ids=[c[0] for c in CASES])
def test_hidden_sizes_dead_code_and_smuggled_calls_are_refused(name, edits, code, text):
    found = check_ascendc(changed(*edits)).reasons
    assert any(r.startswith(code + ":") and text in r for r in found), found


@pytest.mark.parametrize("edits", [
    [],  # the Add itself
    [(INIT_X, "pipe.InitBuffer(inQueueX, BUFFER_NUM, this->blockLength * sizeof(float));")],  # runtime: a warning
    [(INIT_X, "pipe.InitBuffer(inQueueX, BUFFER_NUM, static_cast<uint32_t>(TILE_LENGTH) * sizeof(float));")],
    [("    __aicore__ inline void CopyIn(int32_t progress)\n    {",
      "    __aicore__ inline void CopyIn(int32_t progress)\n    {\n        if (progress < 0) { return; }")],
    [("for (int32_t i = 0; i < this->tileNum; i++) {", "for (int32_t i = 0; i < this->tileNum; i++) {\n"
      "            if (i < 0) { return; }")],
], ids=["add", "runtime size", "cast", "return before any alloc", "return in the tile loop"])
def test_what_a_correct_project_writes_still_passes(edits):
    report = check_ascendc(changed(*edits))
    assert report.reasons == [], report.reasons


@pytest.mark.parametrize("name, code", [("ascendc_ub_constexpr_fn", "ascendc-ub"),
                                        ("ascendc_system_pointer", "ascendc-forbidden"),
                                        ("ascendc_tiling_if0", "ascendc-tiling")])
def test_hostile_projects_exit_1_end_to_end(monkeypatch, name, code):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    v = verify(SPEC, HOSTILE / f"{name}.py", VerifyOptions(backend="ascendc", device="cpu", trials=1, seed=3,
                                                          sandbox="none"))
    assert ladder.exit_code(v) == 1 and (v["failed_step"], ladder.failed_check(v)) == ("static", "rules")
    assert v["reasons"][0].startswith(code + ":"), v["reasons"]
