"""AOT precision report: a float32 op whose kernel runs tl.dot on tensor cores at tf32 or fp16 is
named; an "ieee" dot is not. Compiles for sm_90 on the CPU (no GPU needed), ~1-3 s per kernel."""
from __future__ import annotations

import torch
import triton.language as tl
from triton.runtime.jit import JITFunction

from opforge.backends.triton.aot import compile_launches, tensor_core_precisions
from opforge.harness.guards import RecordedLaunch

BLOCK = 64  # the smallest tile wgmma takes on sm_90 (m64); smaller tiles fall back to mma.sync


def _dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr, PRECISION: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tile = r[:, None] * BLOCK + r[None, :]
    c = tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile), input_precision=PRECISION)
    tl.store(c_ptr + tile, c)


def _dot_default(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tile = r[:, None] * BLOCK + r[None, :]
    tl.store(c_ptr + tile, tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile)))  # tf32 for fp32 operands


def _dot_fp16(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tile = r[:, None] * BLOCK + r[None, :]
    a = tl.load(a_ptr + tile).to(tl.float16)
    b = tl.load(b_ptr + tile).to(tl.float16)
    tl.store(c_ptr + tile, tl.dot(a, b))


# JITFunction rather than @triton.jit: the decorator hands back an interpreter function when the
# session runs with TRITON_INTERPRET=1, and ahead-of-time compilation needs the real one.
DOT, DOT_DEFAULT, DOT_FP16 = JITFunction(_dot), JITFunction(_dot_default), JITFunction(_dot_fp16)


def _compile(kernel, name, float32=True, **constexprs):
    x = torch.randn(BLOCK, BLOCK)
    launch = RecordedLaunch(kernel, name, (x, x, x), {"BLOCK": BLOCK, **constexprs}, (1,))
    kernels, reasons, notes = compile_launches([launch], 90, float32=float32)
    assert len(kernels) == 1 and not notes, (reasons, notes)
    return kernels[0], reasons


def test_tf32_dot_is_low_precision_in_a_float32_op():
    entry, reasons = _compile(DOT, "dot_tf32", PRECISION="tf32")
    assert entry["tensor_core_precisions"] == ["tf32"] and entry["mma"]
    assert reasons == ["low-precision: dot_tf32 uses wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
                       "(tensor cores at tf32) in a float32 op"]


def test_default_dot_on_fp32_operands_is_tf32():
    entry, reasons = _compile(DOT_DEFAULT, "dot_default")
    assert entry["tensor_core_precisions"] == ["tf32"]
    assert len(reasons) == 1 and reasons[0].startswith("low-precision: dot_default uses wgmma")


def test_ieee_dot_uses_no_tensor_cores():
    entry, reasons = _compile(DOT, "dot_ieee", PRECISION="ieee")
    assert entry["tensor_core_precisions"] == [] and entry["mma"] is False
    assert reasons == []


def test_fp16_cast_dot_is_flagged_as_fp16():
    entry, reasons = _compile(DOT_FP16, "dot_fp16")
    assert entry["tensor_core_precisions"] == ["fp16"]
    assert len(reasons) == 1 and "f16.f16" in reasons[0] and "(tensor cores at fp16)" in reasons[0]


def test_precisions_are_recorded_but_not_judged_outside_float32_ops():
    entry, reasons = _compile(DOT_FP16, "dot_fp16", float32=False)
    assert entry["tensor_core_precisions"] == ["fp16"] and reasons == []


def test_tf32x3_emulation_is_named_and_not_flagged():
    # three tf32 products recover ~fp32 accuracy: the tf32 mma in the PTX is not a precision loss
    entry, reasons = _compile(DOT, "dot_tf32x3", PRECISION="tf32x3")
    assert entry["tensor_core_precisions"] == ["tf32x3"] and entry["mma"] and reasons == []


def test_ptx_of_other_architectures():
    sm80 = "\tmma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2}, {%r1}, {%r2}, {%f3};"
    sm100 = "\t@%p7 tcgen05.mma.cta_group::1.kind::f16 [ %r308 + 0 ], [ %r234 + 0 ], %rd107, %r235, %p6;"
    fp8 = "\twgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {%f1}, %rd1, %rd2, p, 1, 1;"
    f64 = "\tmma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1, %fd2}, {%fd3}, {%fd4}, {%fd5, %fd6};"
    assert tensor_core_precisions(sm80)[1] == ["tf32"]
    assert tensor_core_precisions(sm100) == (["tcgen05.mma.cta_group::1.kind::f16"], ["fp16/bf16"])
    assert tensor_core_precisions(fp8)[1] == ["fp8e4m3"]
    assert tensor_core_precisions(f64) == (["mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"], [])
    # a plain tf32 dot next to a tf32x3 one keeps its tf32
    ttir = ("%4 = tt.dot %a, %b, %c, inputPrecision = tf32x3 : tensor<64x64xf32> * tensor<64x64xf32>\n"
            "%5 = tt.dot %a, %b, %c, inputPrecision = tf32 : tensor<64x64xf32> * tensor<64x64xf32>\n")
    assert tensor_core_precisions(sm80, ttir)[1] == ["tf32", "tf32x3"]
