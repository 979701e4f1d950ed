"""Core-ATen elementwise ops as CUDA C++ expressions, shared by the CUDA emitters (one formatter per
op of codegen.exprs.ELEMENTWISE).

`EXPR[target](args, kwargs)` formats one node given its arguments already rendered: an argument is
either a C++ value's name (Var) or a Python literal. Values are `float` (loads of half types are
converted, see LOADS), integers `long long`, flags `bool`; every float literal carries the `f`
suffix so no expression is promoted to double. NaN propagates through max/min/clamp/relu as in torch
(helpers in PRELUDE); round is rintf (half to even, as torch.round)."""
from __future__ import annotations

import math

import torch

from opforge.codegen.exprs import GILES_CENTRAL, GILES_TAIL, Formatter, Var, infix
from opforge.codegen.lower import Unsupported

# C types of tensor elements; the value type each is computed in (half types: float).
CTYPES = {torch.float32: "float", torch.float16: "__half", torch.bfloat16: "__nv_bfloat16",
          torch.int64: "long long", torch.int32: "int", torch.int16: "int16_t", torch.int8: "int8_t",
          torch.uint8: "uint8_t", torch.bool: "bool"}
VALUE_TYPES = {torch.float32: "float", torch.float16: "float", torch.bfloat16: "float", torch.int64: "long long",
               torch.int32: "int", torch.int16: "int", torch.int8: "int", torch.uint8: "int", torch.bool: "bool"}
LOADS = {torch.float16: "__half2float({0})", torch.bfloat16: "__bfloat162float({0})"}
STORES = {torch.float16: "__float2half_rn((float)({0}))", torch.bfloat16: "__float2bfloat16_rn((float)({0}))"}

PRELUDE = r"""#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <math.h>

// NaN wins, as in torch.maximum / torch.amax (fmaxf would drop it).
__device__ __forceinline__ float nan_max(float a, float b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ float nan_min(float a, float b) { return (a != a || a < b) ? a : b; }
"""
# torch.fmod / torch.remainder in the promoted type of their operands (decltype(a + b), as torch
# promotes): fmodf for floats (exact), C's % for integers (truncated, the dividend's sign, as torch.fmod);
# remainder is torch's own formula, fmod then + b where the signs differ.
FMOD = r"""__device__ __forceinline__ float fmod_same(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ int fmod_same(int a, int b) { return a % b; }
__device__ __forceinline__ long long fmod_same(long long a, long long b) { return a % b; }
template <typename A, typename B>
__device__ __forceinline__ auto op_fmod(A a, B b) -> decltype(a + b) {
    return fmod_same((decltype(a + b))a, (decltype(a + b))b);
}
"""
REMAINDER = r"""template <typename A, typename B>
__device__ __forceinline__ auto op_remainder(A a, B b) -> decltype(a + b) {
    decltype(a + b) m = op_fmod(a, b);
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
"""


def _erfinv_helper() -> str:
    """Giles' erfinv (codegen/exprs.py) in C: CUDA's erfinvf has no host function the emulator could call."""
    def horner(coefficients: tuple) -> str:
        return "".join(f"        p = {c!r}f + p * w;\n" for c in coefficients[1:])
    return ("// erfinv: M. Giles, \"Approximating the erfinv function\" (GPU Computing Gems Jade, 2011).\n"
            "__device__ __forceinline__ float erfinv_giles(float x) {\n"
            "    if (fabsf(x) == 1.0f) return x * INFINITY;\n"
            "    float w = -logf((1.0f - x) * (1.0f + x)), p;\n"
            f"    if (w < 5.0f) {{\n        w = w - 2.5f;\n        p = {GILES_CENTRAL[0]!r}f;\n{horner(GILES_CENTRAL)}"
            f"    }} else {{\n        w = sqrtf(w) - 3.0f;\n        p = {GILES_TAIL[0]!r}f;\n{horner(GILES_TAIL)}"
            "    }\n    return p * x;\n}\n")


ERFINV = _erfinv_helper()


# Helpers included only where the code calls them (prelude): the rounding ones only where a graph
# rounds to a half type (a float32 op's source must not use them: static checks).
HELPERS = {"round_half": "__device__ __forceinline__ float round_half(float x) "
                          "{ return __half2float(__float2half_rn(x)); }\n",
            "round_bf16": "__device__ __forceinline__ float round_bf16(float x) "
                          "{ return __bfloat162float(__float2bfloat16_rn(x)); }\n",
            "op_fmod": FMOD, "op_remainder": REMAINDER, "erfinv_giles": ERFINV}


def prelude(code: str) -> str:
    """The expression helpers, with the optional helpers `code` calls (and those they call)."""
    used = ""
    for name, text in reversed(HELPERS.items()):  # a helper calls only helpers listed before it
        if name + "(" in code + used:
            used = text + used
    return PRELUDE + used


def lit(value) -> str:
    """Render an argument: a C++ value by name, a Python number as a typed literal."""
    if isinstance(value, Var):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value}LL" if abs(value) >= 2 ** 31 else str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NAN"
        if math.isinf(value):
            return "INFINITY" if value > 0 else "(-INFINITY)"
        text = repr(value)
        return text + ("f" if "." in text or "e" in text else ".0f")
    raise Unsupported(f"argument {value!r} of type {type(value).__name__}")


def _fmt(template: str) -> Formatter:
    """An op written once in terms of its argument(s) {0}, {1}."""
    return lambda a, k: template.format(*(lit(x) for x in a))



def _pow(a, k) -> str:
    base, exp = a
    if not isinstance(exp, Var):
        exact = {1: "{0}", 2: "({0} * {0})", 3: "({0} * {0} * {0})", 0.5: "sqrtf({0})", -1: "(1.0f / {0})",
                 -0.5: "(1.0f / sqrtf({0}))", 0: "({0} * 0.0f + 1.0f)"}
        if exp in exact:
            return exact[exp].format(lit(base))
    if not isinstance(base, Var) and base <= 0:
        raise Unsupported("pow of a non-positive scalar")
    return f"powf((float)({lit(base)}), (float)({lit(exp)}))"


def _clamp(a, k) -> str:
    lo = a[1] if len(a) > 1 else k.get("min")
    hi = a[2] if len(a) > 2 else k.get("max")
    out = lit(a[0])
    if lo is not None:
        out = f"nan_max({out}, {lit(lo)})"
    if hi is not None:
        out = f"nan_min({out}, {lit(hi)})"
    return out


CASTS = {torch.float32: "(float)({0})", torch.float16: "round_half((float)({0}))",
         torch.bfloat16: "round_bf16((float)({0}))", torch.int64: "(long long)({0})", torch.int32: "(int)({0})",
         torch.int16: "(int)(int16_t)({0})", torch.int8: "(int)(int8_t)({0})", torch.uint8: "(int)(uint8_t)({0})",
         torch.bool: "(({0}) != 0)"}


def _cast(a, k) -> str:
    dtype = k.get("dtype")
    if dtype is None:
        return lit(a[0])
    if dtype not in CASTS:
        raise Unsupported(f"cast to {dtype}")
    return CASTS[dtype].format(lit(a[0]))


def _div(a, k) -> str:
    if k.get("rounding_mode") is not None:
        raise Unsupported(f"division with rounding_mode={k['rounding_mode']}")
    return f"((float)({lit(a[0])}) / (float)({lit(a[1])}))"  # true division, as torch's


def _where(a, k) -> str:
    return f"(({lit(a[0])}) ? ({lit(a[1])}) : ({lit(a[2])}))"


def _round(a, k) -> str:
    if k.get("decimals"):
        raise Unsupported("torch.round with decimals")
    return f"rintf({lit(a[0])})"


def _call(fn: str) -> Formatter:
    return lambda a, k: f"{fn}({', '.join(lit(x) for x in a)})"


EXPR: dict[str, Formatter] = {
    **infix(lit),
    "aten.div.Tensor": _div, "aten.div.Scalar": _div, "aten.div.Tensor_mode": _div, "prims.div.default": _div,
    "aten.abs.default": _fmt("fabsf((float)({0}))"), "aten.exp.default": _fmt("expf({0})"),
    "aten.exp2.default": _fmt("exp2f({0})"), "aten.log.default": _fmt("logf({0})"),
    "aten.log2.default": _fmt("log2f({0})"), "aten.log1p.default": _fmt("log1pf({0})"),
    "aten.expm1.default": _fmt("expm1f({0})"), "aten.sqrt.default": _fmt("sqrtf({0})"),
    "aten.rsqrt.default": _fmt("(1.0f / sqrtf({0}))"),
    "aten.sigmoid.default": _fmt("(1.0f / (1.0f + expf(-({0}))))"), "aten.erf.default": _fmt("erff({0})"),
    "aten.tanh.default": _fmt("tanhf({0})"), "aten.sin.default": _fmt("sinf({0})"),
    "aten.cos.default": _fmt("cosf({0})"), "aten.floor.default": _fmt("floorf({0})"),
    "aten.ceil.default": _fmt("ceilf({0})"), "aten.reciprocal.default": _fmt("(1.0f / {0})"),
    "aten.relu.default": _fmt("nan_max({0}, 0.0f)"),
    "aten.sign.default": _fmt("(({0}) > 0 ? 1.0f : (({0}) < 0 ? -1.0f : 0.0f))"),
    "aten.pow.Tensor_Scalar": _pow, "aten.pow.Tensor_Tensor": _pow, "aten.pow.Scalar": _pow,
    "aten.clamp.default": _clamp, "aten.clamp.Tensor": _clamp,
    "aten.clamp_min.default": _fmt("nan_max({0}, {1})"), "aten.clamp_max.default": _fmt("nan_min({0}, {1})"),
    "aten.maximum.default": _fmt("nan_max({0}, {1})"), "aten.minimum.default": _fmt("nan_min({0}, {1})"),
    "aten.where.self": _where, "aten.where.ScalarSelf": _where, "aten.where.ScalarOther": _where,
    "aten.where.Scalar": _where, "prims.where.default": _where,
    "aten.logical_and.default": _fmt("(({0}) && ({1}))"), "aten.logical_or.default": _fmt("(({0}) || ({1}))"),
    "aten.logical_not.default": _fmt("(({0}) == 0)"),
    "aten.bitwise_not.default": _fmt("(({0}) == 0)"),
    "aten._to_copy.default": _cast, "prims.convert_element_type.default": lambda a, k: _cast(a[:1], {"dtype": a[1]}),
    "aten.clone.default": _fmt("{0}"), "aten.alias.default": _fmt("{0}"),
    "aten.detach.default": _fmt("{0}"), "aten.lift_fresh_copy.default": _fmt("{0}"),
    "aten.scalar_tensor.default": _fmt("{0}"),
    "aten.isnan.default": _fmt("(({0}) != ({0}))"), "aten.isinf.default": _fmt("(fabsf((float)({0})) == INFINITY)"),
    "aten.full.default": lambda a, k: lit(a[1]),
    "aten.trunc.default": _fmt("truncf({0})"), "aten.round.default": _round, "aten.round.decimals": _round,
    "aten.sinh.default": _fmt("sinhf({0})"), "aten.cosh.default": _fmt("coshf({0})"),
    "aten.tan.default": _fmt("tanf({0})"), "aten.asinh.default": _fmt("asinhf({0})"),
    "aten.acosh.default": _fmt("acoshf({0})"), "aten.atanh.default": _fmt("atanhf({0})"),
    "aten.log10.default": _fmt("log10f({0})"), "aten.hypot.default": _fmt("hypotf({0}, {1})"),
    "aten.atan.default": _fmt("atanf({0})"), "aten.atan2.default": _fmt("atan2f({0}, {1})"),
    "aten.fmod.Tensor": _fmt("op_fmod({0}, {1})"), "aten.fmod.Scalar": _fmt("op_fmod({0}, {1})"),
    "aten.remainder.Tensor": _fmt("op_remainder({0}, {1})"), "aten.remainder.Scalar": _fmt("op_remainder({0}, {1})"),
    "aten.remainder.Scalar_Tensor": _fmt("op_remainder({0}, {1})"),
    "aten.erfinv.default": _fmt("erfinv_giles({0})"),
}
