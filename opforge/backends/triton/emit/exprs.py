"""Core-ATen elementwise ops as Triton expressions, shared by every Triton emitter
(one formatter per op of codegen.exprs.ELEMENTWISE).

`EXPR[target](args, kwargs)` formats one node given its arguments already rendered: an argument is
either the name of a Triton value (str) or a Python literal. Math runs in fp32 (loads upcast half
types); numerically delicate ops use stable forms (log1p, expm1, tanh)."""
from __future__ import annotations

import math

import torch

from opforge.codegen.exprs import GILES_CENTRAL, GILES_TAIL, Formatter, Var, binary, infix
from opforge.codegen.lower import Unsupported

TL_DTYPES = {torch.float32: "tl.float32", torch.float16: "tl.float16", torch.bfloat16: "tl.bfloat16",
             torch.float64: "tl.float64", torch.int64: "tl.int64", torch.int32: "tl.int32",
             torch.int16: "tl.int16", torch.int8: "tl.int8", torch.uint8: "tl.uint8", torch.bool: "tl.int1"}


def lit(value) -> str:
    """Render an argument: a Triton value by name, a Python number as a literal."""
    if isinstance(value, Var):
        return str(value)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    raise Unsupported(f"argument {value!r} of type {type(value).__name__}")



def _call(fn: str) -> Formatter:
    return lambda a, k: f"{fn}({', '.join(lit(x) for x in a)})"


def _pow(a, k) -> str:
    base, exp = a
    if not isinstance(exp, Var):
        exact = {1: "{0}", 2: "({0} * {0})", 3: "({0} * {0} * {0})", 0.5: "tl.sqrt({0})", -1: "(1.0 / {0})",
                 -0.5: "tl.rsqrt({0})", 0: "({0} * 0.0 + 1.0)"}
        if exp in exact:
            return exact[exp].format(lit(base))
    if not isinstance(base, Var):  # scalar ** tensor
        return f"tl.exp({lit(exp)} * {math.log(base)!r})" if base > 0 else _unsupported("pow of a non-positive scalar")
    return f"tl.exp({lit(exp)} * tl.log({lit(base)}))"


def _unsupported(what: str) -> str:
    raise Unsupported(what)


def _clamp(a, k) -> str:
    lo = a[1] if len(a) > 1 else k.get("min")
    hi = a[2] if len(a) > 2 else k.get("max")
    out = lit(a[0])
    if lo is not None:
        out = f"tl.maximum({out}, {lit(lo)})"
    if hi is not None:
        out = f"tl.minimum({out}, {lit(hi)})"
    return out


def _cast(a, k) -> str:
    dtype = k.get("dtype")
    if dtype is None:
        return lit(a[0])
    if dtype not in TL_DTYPES:
        raise Unsupported(f"cast to {dtype}")
    return f"{lit(a[0])}.to({TL_DTYPES[dtype]})"


def _div(a, k) -> str:
    if k.get("rounding_mode") is not None:
        raise Unsupported(f"division with rounding_mode={k['rounding_mode']}")
    return f"({lit(a[0])} / {lit(a[1])})"


def _where(a, k) -> str:
    return f"tl.where({lit(a[0])}, {lit(a[1])}, {lit(a[2])})"


def _round(a, k) -> str:
    """Round half to even, as torch.round: a tie goes to the even neighbour."""
    if k.get("decimals"):
        raise Unsupported("torch.round with decimals")
    x = lit(a[0])
    f, d = f"tl.floor({x})", f"({x} - tl.floor({x}))"
    return f"tl.where({d} > 0.5, {f} + 1.0, tl.where({d} < 0.5, {f}, {f} + ({f} - 2.0 * tl.floor({f} * 0.5))))"


def _fmt(template: str) -> Formatter:
    """An op written once in terms of its argument(s) {0}, {1}."""
    return lambda a, k: template.format(*(lit(x) for x in a))


# log1p and expm1 by Goldberg's and Kahan's corrections (D. Goldberg, "What every computer scientist
# should know about floating-point arithmetic", 1991, theorem 4): with u = 1 + x rounded,
# log1p(x) = log(u) * x / (u - 1), and with u = exp(x), expm1(x) = (u - 1) * x / log(u); the ratio
# cancels u's rounding. A cut-over to log(1 + x) at |x| = 1e-4 lost 6e-4 relative at x = 1e-4
# (mish near x = -9 through softplus). u == 1 is x itself; from |x| = 0.5 on the plain forms lose
# nothing (|u - 1| >= 0.39) and keep 0, inf and denormal u (exp(-100)) out of the ratio.
# sinh(x) = (expm1(x) - expm1(-x)) / 2 keeps tiny arguments exact; asinh(|x|) is
# log1p(|x| + x^2 / (1 + sqrt(x^2 + 1))), a sum without cancellation.
_EXPM1 = ("tl.where(tl.exp({0}) == 1.0, {0}, tl.where(tl.abs({0}) < 0.5, "
          "(tl.exp({0}) - 1.0) * ({0} / tl.log(tl.exp({0}))), tl.exp({0}) - 1.0))")
_LOG1P = ("tl.where(1.0 + {0} == 1.0, {0}, tl.where(tl.abs({0}) < 0.5, "
          "tl.log(1.0 + {0}) * ({0} / ((1.0 + {0}) - 1.0)), tl.log(1.0 + {0})))")


# tanh: Cephes tanhf (S. L. Moshier, single/tanhf.c; peak relative error 1.3e-7 on [-2, 2]): an odd
# degree-11 polynomial for |x| < 0.625, else 1 - 2 / (exp(2|x|) + 1) with x's sign (exact 1 once exp
# overflows). 2 * sigmoid(2x) - 1 cancelled to a 2e-3 relative error at x = 1e-4.
def _tanh(a, k) -> str:
    x = lit(a[0])
    z = f"({x} * {x})"
    small = (f"({x} * (1.0 + ((((-5.70498872745e-3 * {z} + 2.06390887954e-2) * {z} - 5.37397155531e-2) * {z}"
             f" + 1.33314422036e-1) * {z} - 3.33332819422e-1) * {z}))")  # x * (...): tanh(-0) = -0
    large = f"(1.0 - 2.0 / (tl.exp(2.0 * tl.abs({x})) + 1.0))"
    return f"tl.where(tl.abs({x}) < 0.625, {small}, tl.where({x} < 0, -{large}, {large}))"


def _asinh(a, k) -> str:
    x = lit(a[0])
    ax = f"tl.abs({x})"
    inner = f"({ax} + {x} * {x} / (1.0 + tl.sqrt({x} * {x} + 1.0)))"
    return f"(tl.where({x} < 0, -1.0, 1.0) * {_LOG1P.format(inner)})"


# atan: Cephes atanf (S. L. Moshier, Cephes Math Library, single/atanf.c; peak relative error 1.9e-7
# on [-10, 10]): |x| reduced to [0, tan(pi/8)] by atan(x) = pi/2 + atan(-1/x) above tan(3pi/8) and
# pi/4 + atan((x - 1) / (x + 1)) above tan(pi/8), then an odd degree-9 polynomial. Plain tl ops only,
# so the same text runs under the interpreter, on a GPU and on Triton-Ascend.
_TAN_3PI_8, _TAN_PI_8 = 2.414213562373095, 0.41421356237309503


def _atan_poly(t: str) -> str:
    """atan(t) for |t| <= tan(pi/8)."""
    z = f"({t} * {t})"
    return (f"((((0.0805374449538 * {z} - 0.138776856032) * {z} + 0.199777106478) * {z} - 0.333329491539)"
            f" * {z} * {t} + {t})")


def _atan_nonneg(u: str, big: bool = True) -> str:
    """atan(u) for u >= 0 (NaN stays NaN); `big=False` when u <= 1 is known."""
    mid = f"({u} > {_TAN_PI_8})"
    t = f"tl.where({mid}, ({u} - 1.0) / ({u} + 1.0), {u})"
    off = f"tl.where({mid}, {math.pi / 4!r}, 0.0)"
    if big:
        large = f"({u} > {_TAN_3PI_8})"
        t = f"tl.where({large}, -1.0 / tl.maximum({u}, 1.0), {t})"
        off = f"tl.where({large}, {math.pi / 2!r}, {off})"
    return f"({off} + {_atan_poly(t)})"


def _atan(a, k) -> str:
    x = lit(a[0])
    return f"({_atan_nonneg(f'tl.abs({x})')} * tl.where({_negative(x)}, -1.0, 1.0))"


def _negative(x: str) -> str:
    """x < 0 or x is -0.0 (1 / -0.0 = -inf): torch.atan2 keeps the sign of a zero."""
    return f"(({x} < 0) | (1.0 / {x} < 0))"


def _atan2(a, k) -> str:
    """atan2(y, x) from atan(min / max) in [0, 1] and the quadrant, torch's signed zeros included:
    atan2(0, -0) = pi, atan2(-0, -1) = -pi; equal magnitudes (both infinite too) are pi/4."""
    y, x = lit(a[0]), lit(a[1])
    ay, ax = f"tl.abs({y})", f"tl.abs({x})"
    t = f"tl.where({ay} > {ax}, {ax} / {ay}, tl.where({ax} == {ay}, tl.where({ax} > 0, 1.0, 0.0), {ay} / {ax}))"
    r = f"tl.where({ay} > {ax}, {math.pi / 2!r} - {_atan_nonneg(t, big=False)}, {_atan_nonneg(t, big=False)})"
    return f"(tl.where({_negative(x)}, {math.pi!r} - {r}, {r}) * tl.where({_negative(y)}, -1.0, 1.0))"


def _toward(v, x) -> str:
    """|v| with the sign of x (literals folded)."""
    mag, neg = (f"tl.abs({v})", f"(-tl.abs({v}))") if isinstance(v, Var) else (lit(abs(v)), lit(-abs(v)))
    if not isinstance(x, Var):
        return neg if x < 0 else mag
    return f"tl.where({x} < 0, {neg}, {mag})"


def _opposite(r: str, v) -> str:
    """r is nonzero with the opposite sign of v (v a literal: folded to one comparison)."""
    if isinstance(v, Var):
        return f"(({r} != 0) & (({r} < 0) != ({v} < 0)))"
    return f"({r} > 0)" if v < 0 else f"({r} < 0)"


def _fmod(a, k) -> str:
    """torch.fmod: the remainder with the dividend's sign. Triton's % is C's (LLVM frem / srem): exact
    for integers and under the interpreter (np.fmod). A result of the other sign (NVPTX lowers frem as
    x - trunc(x/y) * y, so a quotient rounded up to the next integer overshoots; a floored %, as some
    Triton front ends define it for floats) is one |y| off: the where adds it back, a no-op for an
    exact remainder. Triton-Ascend's interpreter has no float % (create_mod): its emitter takes
    DIVIDED_FMOD for floats."""
    x, y = a
    r = f"({lit(x)} % {lit(y)})"
    return f"tl.where({_opposite(r, x)}, {r} + {_toward(y, x)}, {r})"


def _fmod_divided(a, k) -> str:
    """fmod as x - trunc(x / y) * y, for a target without a float %: within an ulp of x rather than
    exact; the same sign fix as _fmod for a quotient rounded onto the next integer."""
    x, y = a
    q = f"({lit(x)} / {lit(y)})"
    r = f"({lit(x)} - tl.where({q} >= 0, tl.floor({q}), tl.ceil({q})) * {lit(y)})"
    return f"tl.where({_opposite(r, x)}, {r} + {_toward(y, x)}, {r})"


def _remainder(a, k, fmod=_fmod) -> str:
    """torch.remainder (Python's %), as torch computes it: fmod, then + y where the signs differ."""
    y = a[1]
    m = fmod(a, k)
    return f"tl.where({_opposite(m, y)}, {m} + {lit(y)}, {m})"


def horner(coefficients: tuple, w: str) -> str:
    """c0 w^n + ... + cn, highest degree first, as nested products."""
    out = repr(coefficients[0])
    for c in coefficients[1:]:
        out = f"({out} * {w} + {c!r})"
    return out


def _erfinv(a, k) -> str:
    """Giles' single-precision erfinv (codegen/exprs.py: GILES_CENTRAL, GILES_TAIL); +-1 -> +-inf."""
    x = lit(a[0])
    w = f"(-tl.log((1.0 - {x}) * (1.0 + {x})))"
    central, tail = horner(GILES_CENTRAL, f"({w} - 2.5)"), horner(GILES_TAIL, f"(tl.sqrt({w}) - 3.0)")
    return f'tl.where(tl.abs({x}) == 1.0, {x} * float("inf"), tl.where({w} < 5.0, {central}, {tail}) * {x})'


NAN_MAX = "tl.maximum({0}, {1}, propagate_nan=tl.PropagateNan.ALL)"
NAN_MIN = "tl.minimum({0}, {1}, propagate_nan=tl.PropagateNan.ALL)"

EXPR: dict[str, Formatter] = {
    **infix(lit),
    "aten.div.Tensor": _div, "aten.div.Scalar": _div, "aten.div.Tensor_mode": _div, "prims.div.default": _div,
    "aten.abs.default": _call("tl.abs"), "aten.exp.default": _call("tl.exp"), "aten.exp2.default": _call("tl.exp2"),
    "aten.log.default": _call("tl.log"), "aten.log2.default": _call("tl.log2"),
    "aten.log1p.default": lambda a, k: _LOG1P.format(lit(a[0])),
    "aten.expm1.default": lambda a, k: _EXPM1.format(lit(a[0])),
    "aten.sqrt.default": _call("tl.sqrt"), "aten.rsqrt.default": _call("tl.rsqrt"),
    "aten.sigmoid.default": _call("tl.sigmoid"), "aten.erf.default": _call("tl.math.erf"),
    "aten.tanh.default": _tanh,
    "aten.sin.default": _call("tl.sin"), "aten.cos.default": _call("tl.cos"),
    "aten.floor.default": _call("tl.floor"), "aten.ceil.default": _call("tl.ceil"),
    "aten.reciprocal.default": lambda a, k: f"(1.0 / {lit(a[0])})",
    "aten.relu.default": lambda a, k: f"tl.maximum({lit(a[0])}, 0.0)",
    "aten.sign.default": lambda a, k: "tl.where({0} > 0, 1.0, tl.where({0} < 0, -1.0, 0.0))".format(lit(a[0])),
    "aten.pow.Tensor_Scalar": _pow, "aten.pow.Tensor_Tensor": _pow, "aten.pow.Scalar": _pow,
    "aten.clamp.default": _clamp, "aten.clamp.Tensor": _clamp,
    "aten.clamp_min.default": lambda a, k: f"tl.maximum({lit(a[0])}, {lit(a[1])})",
    "aten.clamp_max.default": lambda a, k: f"tl.minimum({lit(a[0])}, {lit(a[1])})",
    "aten.maximum.default": lambda a, k: NAN_MAX.format(lit(a[0]), lit(a[1])),
    "aten.minimum.default": lambda a, k: NAN_MIN.format(lit(a[0]), lit(a[1])),
    "aten.where.self": _where, "aten.where.ScalarSelf": _where, "aten.where.ScalarOther": _where,
    "aten.where.Scalar": _where, "prims.where.default": _where,
    "aten.logical_and.default": binary(lit, "&"), "aten.logical_or.default": binary(lit, "|"),
    "aten.logical_not.default": lambda a, k: f"({lit(a[0])} == 0)",
    "aten.bitwise_not.default": lambda a, k: f"({lit(a[0])} == 0)",
    "aten._to_copy.default": _cast, "prims.convert_element_type.default": lambda a, k: _cast(a[:1], {"dtype": a[1]}),
    "aten.clone.default": lambda a, k: lit(a[0]), "aten.alias.default": lambda a, k: lit(a[0]),
    "aten.detach.default": lambda a, k: lit(a[0]), "aten.lift_fresh_copy.default": lambda a, k: lit(a[0]),
    "aten.scalar_tensor.default": lambda a, k: lit(a[0]),
    "aten.isnan.default": lambda a, k: "({0} != {0})".format(lit(a[0])),
    "aten.isinf.default": lambda a, k: '(tl.abs({0}) == float("inf"))'.format(lit(a[0])),
    "aten.full.default": lambda a, k: lit(a[1]),
    "aten.trunc.default": _fmt("tl.where({0} >= 0, tl.floor({0}), tl.ceil({0}))"),
    "aten.round.default": _round, "aten.round.decimals": _round,
    "aten.sinh.default": lambda a, k: "(0.5 * (({e0}) - ({e1})))".format(
        e0=_EXPM1.format(lit(a[0])), e1=_EXPM1.format(f"(-{lit(a[0])})")),
    "aten.cosh.default": _fmt("(0.5 * (tl.exp({0}) + tl.exp(-{0})))"),
    "aten.tan.default": _fmt("(tl.sin({0}) / tl.cos({0}))"),
    "aten.asinh.default": _asinh,
    "aten.acosh.default": _fmt("tl.log({0} + tl.sqrt({0} * {0} - 1.0))"),
    "aten.atanh.default": _fmt("(0.5 * tl.log((1.0 + {0}) / (1.0 - {0})))"),
    "aten.log10.default": _fmt("(tl.log({0}) * 0.4342944819032518)"),
    "aten.hypot.default": _fmt("tl.sqrt({0} * {0} + {1} * {1})"),
    "aten.atan.default": _atan, "aten.atan2.default": _atan2,
    "aten.fmod.Tensor": _fmod, "aten.fmod.Scalar": _fmod,
    "aten.remainder.Tensor": _remainder, "aten.remainder.Scalar": _remainder,
    "aten.remainder.Scalar_Tensor": _remainder,
    "aten.erfinv.default": _erfinv,
}

# Casts to the 8-bit float formats, rounded exactly. Triton's own fp32 -> fp8 cast rounds ties wrongly
# under the 3.9 interpreter (50.0 -> 52.0 in e4m3, where IEEE's nearest-even is 48.0), so each format
# has a @triton.jit helper (FP8_HELPERS) that rounds to the format's grid in fp32 with exact steps
# only (the binade from the exponent bits, a power-of-two scale, a floor-based half-even round), then
# casts the exactly representable result: every one of the 254 finite e4m3 and 252 e5m2 values casts
# exactly under the interpreter, and on a GPU cvt.rn of a representable value is the identity.
# Out of range as torch's CPU cast: e4m3fn saturates to +-448 (inf too; it has no inf), e5m2 goes to
# +-inf from 61440 (the midpoint above 57344) on; NaN stays NaN; a signed zero keeps its sign.
# name: (tl type, mantissa bits, smallest normal exponent, largest finite, overflow threshold or None)
FP8 = {torch.float8_e4m3fn: ("float8e4nv", 3, -6, 448.0, None),
       torch.float8_e5m2: ("float8e5", 2, -14, 57344.0, 61440.0)}
FP8_HELPER = '''@triton.jit
def _to_{name}(x):
    """fp32 -> {name}, round half to even (subnormals included), out of range as torch's cast."""
    a = tl.abs(x).to(tl.float32)
    a = tl.where(a > {top!r}, {top!r}, a)  # {clip_note}; NaN stays NaN
    e = tl.maximum(((a.to(tl.int32, bitcast=True) >> 23) & 255) - 127, {emin})  # a's binade, or the subnormals'
    step = ((e + {bias_step}) << 23).to(tl.float32, bitcast=True)  # 2^(e - {mant}): the format's spacing there
    y = a * (({bias_inv} - e) << 23).to(tl.float32, bitcast=True)  # a / step, exact: y < {span}
    f = tl.floor(y)
    d = y - f  # exact
    k = tl.where(d > 0.5, f + 1.0, tl.where(d < 0.5, f, f + (f - 2.0 * tl.floor(f * 0.5))))
    r = k * step{overflow}
    neg = x.to(tl.float32).to(tl.int32, bitcast=True) < 0  # the sign bit: -0.0 and -NaN keep theirs
    nan = tl.where(neg, 255, 127).to(tl.uint8).to(tl.{tl_type}, bitcast=True)  # the interpreter casts NaN to a number
    return tl.where(r != r, nan, tl.where(neg, -r, r).to(tl.{tl_type}))
'''


def _fp8_helper(dtype: torch.dtype) -> str:
    tl_type, mant, emin, top, inf_from = FP8[dtype]
    overflow = (f"\n    r = tl.where(tl.abs(x) >= {inf_from!r}, float(\"inf\"), r)  # rounds past {top!r}: inf"
                if inf_from else "")
    note = "saturated: 448 rounds to itself" if not inf_from else "rounded as 57344; from 61440 on, inf"
    return FP8_HELPER.format(name=str(dtype).removeprefix("torch."), top=top, emin=emin, mant=mant,
                             bias_step=127 - mant, bias_inv=127 + mant, span=2 ** (mant + 1), tl_type=tl_type,
                             overflow=overflow, clip_note=note)


FP8_HELPERS = {f"_to_{str(d).removeprefix('torch.')}": _fp8_helper(d) for d in FP8}


def _cast_exact(a, k) -> str:
    """_cast, and casts to fp8 through FP8_HELPERS (the emitter defines the helpers its text calls)."""
    dtype = k.get("dtype")
    if dtype in FP8:
        return f"_to_{str(dtype).removeprefix('torch.')}({lit(a[0])})"
    return _cast(a, k)


def _div_rn(a, k) -> str:
    """An IEEE quotient: Triton's `/` on fp32 is div.full.f32 on NVIDIA (2 ulp), which a quotient that
    is rounded to an integer or an 8-bit float next (q = round(x / scale)) cannot afford."""
    if k.get("rounding_mode") is not None:
        raise Unsupported(f"division with rounding_mode={k['rounding_mode']}")
    return f"tl.math.div_rn({lit(a[0])}, {lit(a[1])})"


# fmod and remainder of floats without the % operator (Triton-Ascend's interpreter has none for floats).
DIVIDED_FMOD: dict[str, Formatter] = {
    "aten.fmod.Tensor": _fmod_divided, "aten.fmod.Scalar": _fmod_divided,
    **{t: (lambda a, k: _remainder(a, k, _fmod_divided))
       for t in ("aten.remainder.Tensor", "aten.remainder.Scalar", "aten.remainder.Scalar_Tensor")},
}

# EXPR with exact fp8 casts, for an emitter that defines FP8_HELPERS (the row-wise one does).
EXPR_FP8: dict[str, Formatter] = {**EXPR, "aten._to_copy.default": _cast_exact,
                                  "prims.convert_element_type.default": lambda a, k: _cast_exact(a[:1], {"dtype": a[1]})}
# Divisions whose quotient is quantised next, rounded as IEEE does (see _div_rn).
DIV_RN: dict[str, Formatter] = {**{t: _div_rn for t in ("aten.div.Tensor", "aten.div.Scalar", "prims.div.default")},
                                 "aten.reciprocal.default": lambda a, k: _div_rn([1.0, a[0]], k)}
