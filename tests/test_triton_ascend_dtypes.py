"""Data types Atlas A2/A3 cannot compute (Triton-Ascend's docs: fp64 for every op; int64
atomic_add/max/min), which Huawei's front end lets through: refused by the build from each
launch's TTIR (backends/triton_ascend/dtypes.py), and statically where the source spells
tl.float64; the fp32 and int32 kernels beside them still verify."""
from __future__ import annotations

import ast
import json

import pytest

from conftest import DATA, require_ascend
from opforge.backends.triton_ascend import dtypes, frontend, static
from opforge.harness.verify import VerifyOptions, verify

HERE = DATA / "ascend_dtypes"


def options(**kw) -> VerifyOptions:
    return VerifyOptions(**{"seed": 13, "trials": 2, "device": "cpu", "backend": "triton_ascend", "sandbox": "none", **kw})


@pytest.mark.parametrize("spec, kernel, text", [
    ("spec_affine.py", "affine_fp64.py", "_affine computes in fp64"),
    ("spec_sum_i64.py", "sum_atomic_i64.py", "_sum uses tl.atomic_add on int64"),
], ids=["fp64-arithmetic", "int64-atomic-add"])
def test_what_the_npu_cannot_compute_fails_the_front_end_step(spec, kernel, text):
    require_ascend()
    v = verify(HERE / spec, HERE / kernel, options(skip_static=True))  # the build's own mechanism
    assert not v["correct"] and v["failed_step"] == "frontend_compile", v["reasons"]
    assert v["reasons"][0].startswith(f"unsupported-dtype: {text}") and "Atlas A2/A3" in v["reasons"][0]
    assert "hardware limitation" in v["reasons"][0] and v["level"] == "static"


@pytest.mark.parametrize("spec, kernel", [("spec_affine.py", "affine_fp32.py"), ("spec_sum_i32.py", "sum_atomic_i32.py")],
                         ids=["fp32", "int32-atomic-add"])
def test_the_same_kernels_on_supported_types_verify(spec, kernel):
    require_ascend()
    v = verify(HERE / spec, HERE / kernel, options())
    assert v["correct"] and v["level"] == "emulated", v["reasons"]
    assert v["steps"]["frontend_compile"]["status"] == "passed"
    kernel = v["build"]["kernels"][0]  # the unified buffer the HIVM pipeline planned, in bits
    assert 0 < kernel["required_ub_bits"] <= kernel["ub_available_bits"] == 192 * 1024 * 8, kernel


def test_the_unified_buffer_use_is_read_from_bishengirs_memory_display(tmp_path):
    overflow = (DATA / "triton_ascend" / "bishengir_ub_overflow.txt").read_text()
    assert frontend.parse_bishengir(1, overflow).ub_bits == 50331904  # what the tile needs
    (tmp_path / "memory_info_aiv.json").write_text(json.dumps({"Record": [
        {"scope": "ub", "memory_info_array": [{"extent": 32768, "offset": [0, 65536]}, {"extent": 8, "offset": [32768]}]},
        {"scope": "l1", "memory_info_array": [{"extent": 10 ** 9, "offset": [0]}]}]}))
    assert frontend.planned_ub_bits(tmp_path) == 98304  # a double-buffered tile ends furthest
    assert frontend.planned_ub_bits(tmp_path / "none") is None


def test_the_source_spelling_tl_float64_is_refused_statically():
    reasons = static.check_ascend(ast.parse((HERE / "affine_fp64.py").read_text())).reasons
    assert reasons == ["unsupported-dtype: tl.float64 in tl.load(x_ptr + offs, mask=mask, other=0.0).to(...) "
                       f"(line 15): {dtypes.FP64}"]
    aliases = ("import triton.language as lang\nfrom triton.language import float64 as f8\n"
               "def k(x):\n    a = lang.full([8], 0, dtype=lang.fp64)\n    b = x.to(f8)\n"
               "    if x.dtype == lang.float64:\n        pass\n")
    found = dtypes.source_findings(ast.parse(aliases))
    assert [r.split(" (line ")[1].split(")")[0] for r in found] == ["4", "5"]  # a comparison is no use
    assert not dtypes.source_findings(ast.parse("import torch\nx = torch.zeros(3, dtype=torch.float64)\n"))


TTIR_F64_LOAD = """module {
  tt.func public @k(%arg0: !tt.ptr<f64> loc("k.py":1:0), %arg1: !tt.ptr<f32> loc("k.py":1:0)) {
    %0 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32> loc(#loc1)
    %1 = tt.splat %arg0 : !tt.ptr<f64> -> tensor<64x!tt.ptr<f64>> loc(#loc2)
    %2 = tt.addptr %1, %0 : tensor<64x!tt.ptr<f64>>, tensor<64xi32> loc(#loc2)
    %3 = tt.load %2 : tensor<64x!tt.ptr<f64>> loc(#loc3)
    %4 = arith.truncf %3 : tensor<64xf64> to tensor<64xf32> loc(callsite(#loc4 at #loc5))
    tt.return loc(#loc6)
  } loc(#loc)
} loc(#loc)"""


def test_fp64_is_read_from_the_ttir_exactly():
    # loading fp64 and narrowing it at once is still an fp64 load and cast (tl.load, tl.cast: fp64 unsupported)
    (reason,) = dtypes.ttir_findings("k", TTIR_F64_LOAD)
    assert reason.startswith("unsupported-dtype: k computes in fp64 (2 ops: tt.load, arith.truncf; first "
                             "`%3 = tt.load %2 : tensor<64x!tt.ptr<f64>>`)")
    # an address of f64 data that is moved but never read is no fp64 op
    assert dtypes.ttir_findings("k", "\n".join(TTIR_F64_LOAD.splitlines()[:5])) == []
    i64_atomic = "%5 = tt.atomic_rmw add, acq_rel, gpu, %p, %v, %m : (tensor<8x!tt.ptr<i64>>, tensor<8xi64>, tensor<8xi1>) -> tensor<8xi64>"
    assert "tl.atomic_add on int64" in dtypes.ttir_findings("k", i64_atomic)[0]
    for ok in (i64_atomic.replace("i64", "i32"), i64_atomic.replace("add,", "xchg,"), i64_atomic.replace("add,", "or,")):
        assert dtypes.ttir_findings("k", ok) == []
    assert "tl.atomic_max" in dtypes.ttir_findings("k", i64_atomic.replace("add,", "umax,"))[0]


def test_the_drafter_is_told_to_compute_in_fp32():
    from opforge.backends import plugin

    hints = plugin("triton_ascend").reason_hints(["unsupported-dtype: k computes in fp64 (...)"])
    assert len(hints) == 1 and "fp32" in hints[0] and "int32" in hints[0]
