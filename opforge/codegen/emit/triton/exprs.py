"""Core-ATen elementwise ops as Triton expressions, shared by every Triton emitter
(one formatter per op of codegen.exprs.ELEMENTWISE).

`EXPR[target](args, kwargs)` formats one node given its arguments already rendered: an argument is
either the name of a Triton value (str) or a Python literal. Math runs in fp32 (loads upcast half
types); numerically delicate ops use stable forms (log1p, expm1, tanh)."""
from __future__ import annotations

import math
from typing import Callable

import torch

from opforge.codegen.exprs import Var
from opforge.codegen.lower import Unsupported

Formatter = Callable[[list, dict], str]

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


def _bin(op: str) -> Formatter:
    return lambda a, k: f"({lit(a[0])} {op} {lit(a[1])})"


def _scaled(op: str) -> Formatter:
    def fmt(a, k):
        alpha = k.get("alpha", 1)
        other = lit(a[1]) if alpha == 1 else f"({lit(a[1])} * {lit(alpha)})"
        return f"({lit(a[0])} {op} {other})"
    return fmt


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


# sinh(x) = (expm1(x) - expm1(-x)) / 2 keeps tiny arguments exact; asinh(|x|) is
# log1p(|x| + x^2 / (1 + sqrt(x^2 + 1))), a sum without cancellation.
_EXPM1 = "tl.where(tl.abs({0}) < 1e-5, {0} * (1.0 + 0.5 * {0}), tl.exp({0}) - 1.0)"
_LOG1P = "tl.where(tl.abs({0}) < 1e-4, {0} * (1.0 - {0} * (0.5 - {0} / 3.0)), tl.log(1.0 + {0}))"


def _asinh(a, k) -> str:
    x = lit(a[0])
    ax = f"tl.abs({x})"
    inner = f"({ax} + {x} * {x} / (1.0 + tl.sqrt({x} * {x} + 1.0)))"
    return f"(tl.where({x} < 0, -1.0, 1.0) * {_LOG1P.format(inner)})"

NAN_MAX = "tl.maximum({0}, {1}, propagate_nan=tl.PropagateNan.ALL)"
NAN_MIN = "tl.minimum({0}, {1}, propagate_nan=tl.PropagateNan.ALL)"

EXPR: dict[str, Formatter] = {
    "aten.add.Tensor": _scaled("+"), "aten.add.Scalar": _scaled("+"), "prims.add.default": _bin("+"),
    "aten.sub.Tensor": _scaled("-"), "aten.sub.Scalar": _scaled("-"), "prims.sub.default": _bin("-"),
    "aten.rsub.Scalar": lambda a, k: f"({lit(a[1])} - {lit(a[0])})",
    "aten.rsub.Tensor": lambda a, k: f"({lit(a[1])} - {lit(a[0])})",
    "aten.mul.Tensor": _bin("*"), "aten.mul.Scalar": _bin("*"), "prims.mul.default": _bin("*"),
    "aten.div.Tensor": _div, "aten.div.Scalar": _div, "aten.div.Tensor_mode": _div, "prims.div.default": _div,
    "aten.neg.default": lambda a, k: f"(-{lit(a[0])})",
    "aten.abs.default": _call("tl.abs"), "aten.exp.default": _call("tl.exp"), "aten.exp2.default": _call("tl.exp2"),
    "aten.log.default": _call("tl.log"), "aten.log2.default": _call("tl.log2"),
    "aten.log1p.default": lambda a, k: _LOG1P.format(lit(a[0])),
    "aten.expm1.default": lambda a, k: _EXPM1.format(lit(a[0])),
    "aten.sqrt.default": _call("tl.sqrt"), "aten.rsqrt.default": _call("tl.rsqrt"),
    "aten.sigmoid.default": _call("tl.sigmoid"), "aten.erf.default": _call("tl.math.erf"),
    "aten.tanh.default": lambda a, k: "(2.0 * tl.sigmoid(2.0 * {0}) - 1.0)".format(lit(a[0])),
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
    "aten.gt.Tensor": _bin(">"), "aten.gt.Scalar": _bin(">"), "aten.lt.Tensor": _bin("<"), "aten.lt.Scalar": _bin("<"),
    "aten.ge.Tensor": _bin(">="), "aten.ge.Scalar": _bin(">="), "aten.le.Tensor": _bin("<="), "aten.le.Scalar": _bin("<="),
    "aten.eq.Tensor": _bin("=="), "aten.eq.Scalar": _bin("=="), "aten.ne.Tensor": _bin("!="), "aten.ne.Scalar": _bin("!="),
    "aten.logical_and.default": _bin("&"), "aten.logical_or.default": _bin("|"),
    "aten.logical_not.default": lambda a, k: f"({lit(a[0])} == 0)",
    "aten.bitwise_and.Tensor": _bin("&"), "aten.bitwise_or.Tensor": _bin("|"),
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
}
