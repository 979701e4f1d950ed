"""What every family fuses, independent of the backend: the elementwise core-ATen ops (each emitter
has a formatter for every one: backends/triton/emit/exprs.py, backends/cuda/emit/exprs.py), the
shape-only ops, `Var`, a rendered value's name as opposed to a Python literal, and the formatters of
the ops C++ and Triton's Python both write as infix operators (infix)."""
from __future__ import annotations

from typing import Any, Callable

Formatter = Callable[[list, dict], str]  # (rendered arguments, the node's kwargs) -> expression

ELEMENTWISE = frozenset({
    'aten.add.Tensor', 'aten.add.Scalar', 'prims.add.default', 'aten.sub.Tensor', 'aten.sub.Scalar',
    'prims.sub.default', 'aten.rsub.Scalar', 'aten.rsub.Tensor', 'aten.mul.Tensor', 'aten.mul.Scalar',
    'prims.mul.default', 'aten.div.Tensor', 'aten.div.Scalar', 'aten.div.Tensor_mode', 'prims.div.default',
    'aten.neg.default', 'aten.abs.default', 'aten.exp.default', 'aten.exp2.default', 'aten.log.default',
    'aten.log2.default', 'aten.log1p.default', 'aten.expm1.default', 'aten.sqrt.default',
    'aten.rsqrt.default', 'aten.sigmoid.default', 'aten.erf.default', 'aten.tanh.default', 'aten.sin.default',
    'aten.cos.default', 'aten.floor.default', 'aten.ceil.default', 'aten.reciprocal.default',
    'aten.relu.default', 'aten.sign.default', 'aten.pow.Tensor_Scalar', 'aten.pow.Tensor_Tensor',
    'aten.pow.Scalar', 'aten.clamp.default', 'aten.clamp.Tensor', 'aten.clamp_min.default',
    'aten.clamp_max.default', 'aten.maximum.default', 'aten.minimum.default', 'aten.where.self',
    'aten.where.ScalarSelf', 'aten.where.ScalarOther', 'aten.where.Scalar', 'prims.where.default',
    'aten.gt.Tensor', 'aten.gt.Scalar', 'aten.lt.Tensor', 'aten.lt.Scalar', 'aten.ge.Tensor',
    'aten.ge.Scalar', 'aten.le.Tensor', 'aten.le.Scalar', 'aten.eq.Tensor', 'aten.eq.Scalar',
    'aten.ne.Tensor', 'aten.ne.Scalar', 'aten.logical_and.default', 'aten.logical_or.default',
    'aten.logical_not.default', 'aten.bitwise_and.Tensor', 'aten.bitwise_or.Tensor',
    'aten.bitwise_not.default', 'aten._to_copy.default', 'prims.convert_element_type.default',
    'aten.clone.default', 'aten.alias.default', 'aten.detach.default', 'aten.lift_fresh_copy.default',
    'aten.scalar_tensor.default', 'aten.isnan.default', 'aten.isinf.default', 'aten.full.default',
    'aten.trunc.default', 'aten.round.default', 'aten.round.decimals', 'aten.sinh.default',
    'aten.cosh.default', 'aten.tan.default', 'aten.asinh.default', 'aten.acosh.default', 'aten.atanh.default',
    'aten.log10.default', 'aten.hypot.default', 'aten.atan.default', 'aten.atan2.default',
    'aten.fmod.Tensor', 'aten.fmod.Scalar', 'aten.remainder.Tensor', 'aten.remainder.Scalar',
    'aten.remainder.Scalar_Tensor', 'aten.erfinv.default',
})

# erfinv where the backend has none: M. Giles, "Approximating the erfinv function", GPU Computing Gems
# Jade Edition (2011), single precision. w = -log((1 - x)(1 + x)); erfinv(x) = x * p, p a degree-8
# polynomial (highest degree first) in w - 2.5 while w < 5 (|x| < 0.9966), in sqrt(w) - 3 beyond.
# Measured against float64 torch.erfinv over [-1, 1] (logspaced to 1 - 5e-8): relative error < 2.5e-7.
GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)

# Shape-only ops: the value is unchanged, only how it is indexed. Generators decide what they accept.
VIEWS = {
    "aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.expand.default",
    "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default",
    "aten.permute.default", "aten.t.default", "aten.transpose.int", "prims.broadcast_in_dim.default",
    "aten.contiguous.default", "aten.slice.Tensor",
}


class Var(str):
    """A rendered value's name (Triton or C++), as opposed to a Python string literal."""


def binary(lit: Callable[[Any], str], op: str) -> Formatter:
    """`(a op b)`, each argument rendered by the language's `lit`."""
    return lambda a, k: f"({lit(a[0])} {op} {lit(a[1])})"


def scaled(lit: Callable[[Any], str], op: str) -> Formatter:
    """`(a op b)`, or `(a op (b * alpha))` for add and sub's alpha."""
    def fmt(a, k):
        alpha = k.get("alpha", 1)
        other = lit(a[1]) if alpha == 1 else f"({lit(a[1])} * {lit(alpha)})"
        return f"({lit(a[0])} {op} {other})"
    return fmt


def infix(lit: Callable[[Any], str]) -> dict[str, Formatter]:
    """The ops C++ and Triton's Python write alike, as infix operators on values rendered by `lit`:
    add, sub and rsub (with alpha), mul, neg, the comparisons, bitwise and/or."""
    reverse = lambda a, k: f"({lit(a[1])} - {lit(a[0])})"  # noqa: E731
    ops = {"aten.add.Tensor": scaled(lit, "+"), "aten.add.Scalar": scaled(lit, "+"), "prims.add.default": binary(lit, "+"),
           "aten.sub.Tensor": scaled(lit, "-"), "aten.sub.Scalar": scaled(lit, "-"), "prims.sub.default": binary(lit, "-"),
           "aten.rsub.Scalar": reverse, "aten.rsub.Tensor": reverse,
           "aten.neg.default": lambda a, k: f"(-{lit(a[0])})",
           "aten.bitwise_and.Tensor": binary(lit, "&"), "aten.bitwise_or.Tensor": binary(lit, "|")}
    ops |= {f"{mul}": binary(lit, "*") for mul in ("aten.mul.Tensor", "aten.mul.Scalar", "prims.mul.default")}
    for name, op in (("gt", ">"), ("lt", "<"), ("ge", ">="), ("le", "<="), ("eq", "=="), ("ne", "!=")):
        ops |= {f"aten.{name}.Tensor": binary(lit, op), f"aten.{name}.Scalar": binary(lit, op)}
    return ops
