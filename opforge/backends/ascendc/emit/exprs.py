"""Core-ATen elementwise ops as AscendC vector instructions over one tile, in fp32.

Unlike the CUDA and Triton tables (one expression per op), AscendC computes whole tiles with one
API call per step (`Add(dst, a, b, len)`), so each op becomes a few statements writing a
destination tile. A value is either a tile (a LocalTensor<float> name) or a scalar (a C++ float
expression: a literal, a tiling field, a value read from GM once); a tile-scalar op uses the
scalar forms (Adds, Muls, Maxs, Mins). Ops with no faithful AscendC form (erf, comparisons and
where, rounding, integer math) raise Unsupported naming the ATen op, so the LLM drafter takes over.

Composite ops, each with the identity it relies on:
- sigmoid(x) = 1 / (1 + exp(-x)); tanh(x) = 1 - 2 / (exp(2x) + 1): exact at +-inf (exp overflows to
  inf, 2/inf = 0), absolute error a few ulp of 1 near 0, the same order as torch's tolerance;
- x / s for a scalar s divides by a Duplicate'd tile (Muls by 1/s would round twice).
A step may write its destination in place (`Exp(dst, dst, len)`), as Huawei's samples do; a
destination never aliases an operand tile, so no step reads what an earlier step overwrote."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from opforge.codegen.exprs import Var
from opforge.codegen.lower import Unsupported

IDENTITY = {"aten.clone.default", "aten.alias.default", "aten.detach.default", "aten.lift_fresh_copy.default"}
CASTS = {"aten._to_copy.default", "prims.convert_element_type.default"}


@dataclass(frozen=True)
class Value:
    """A computed value: a tile's LocalTensor name, or a scalar C++ float expression."""

    kind: str  # "tile" | "scalar"
    ref: str


def lit(value) -> str:
    """A Python number as a float literal (the chain runs in fp32)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Unsupported(f"argument {value!r} of type {type(value).__name__}")
    if not math.isfinite(value):
        raise Unsupported(f"a non-finite constant ({value}) in an AscendC chain")
    text = repr(float(value))
    return text + "f" if ("e" in text or "." in text) else text + ".0f"


def negated(ref: str) -> str:
    """-ref as C++: a literal's sign flipped (never `--2.0f`), anything else parenthesised."""
    if ref[:1].isdigit():
        return "-" + ref
    if ref.startswith("-") and ref[1:2].isdigit():
        return ref[1:]
    return f"-({ref})"


def operand(arg, values: dict[str, Value]) -> Value:
    if isinstance(arg, Var):
        return values[str(arg)]
    return Value("scalar", lit(arg))


# A step writer gets (dst, operands, kwargs) and returns the statements; `len` is the tile's count.
Writer = Callable[[str, list[Value], dict], list[str]]


def _unary(api: str) -> Writer:
    return lambda dst, a, k: [f"AscendC::{api}({dst}, {a[0].ref}, len);"]


def _scaled(sign: str) -> Writer:
    """add / sub with torch's `alpha` (other * alpha)."""
    def write(dst, a, k):
        x, y, alpha = a[0], a[1], k.get("alpha", 1)
        if y.kind == "scalar":
            other = y.ref if alpha == 1 else f"({y.ref} * {lit(alpha)})"
            return [f"AscendC::Adds({dst}, {x.ref}, {negated(other) if sign == '-' else other}, len);"]
        scale = (-1 if sign == "-" else 1) * alpha
        if x.kind == "scalar":  # s + alpha*y, s - alpha*y
            return [f"AscendC::Muls({dst}, {y.ref}, {lit(scale)}, len);", f"AscendC::Adds({dst}, {dst}, {x.ref}, len);"]
        if scale == 1:
            return [f"AscendC::Add({dst}, {x.ref}, {y.ref}, len);"]
        if scale == -1:
            return [f"AscendC::Sub({dst}, {x.ref}, {y.ref}, len);"]
        return [f"AscendC::Muls({dst}, {y.ref}, {lit(scale)}, len);", f"AscendC::Add({dst}, {x.ref}, {dst}, len);"]
    return write


def _rsub(dst, a, k):  # other - alpha * self
    return _scaled("-")(dst, [a[1], a[0]], k)


def _commutative(tile_api: str, scalar_api: str) -> Writer:
    def write(dst, a, k):
        x, y = a
        if x.kind == "scalar":
            x, y = y, x
        if y.kind == "scalar":
            return [f"AscendC::{scalar_api}({dst}, {x.ref}, {y.ref}, len);"]
        return [f"AscendC::{tile_api}({dst}, {x.ref}, {y.ref}, len);"]
    return write


def _div(dst, a, k):
    if k.get("rounding_mode") is not None:
        raise Unsupported(f"division with rounding_mode={k['rounding_mode']}")
    x, y = a
    if y.kind == "scalar":
        return [f"AscendC::Duplicate({dst}, {y.ref}, len);", f"AscendC::Div({dst}, {x.ref}, {dst}, len);"]
    if x.kind == "scalar":
        return [f"AscendC::Duplicate({dst}, {x.ref}, len);", f"AscendC::Div({dst}, {dst}, {y.ref}, len);"]
    return [f"AscendC::Div({dst}, {x.ref}, {y.ref}, len);"]


def _sigmoid(dst, a, k):
    return [f"AscendC::Muls({dst}, {a[0].ref}, -1.0f, len);", f"AscendC::Exp({dst}, {dst}, len);",
            f"AscendC::Adds({dst}, {dst}, 1.0f, len);", f"AscendC::Reciprocal({dst}, {dst}, len);"]


def _tanh(dst, a, k):
    return [f"AscendC::Muls({dst}, {a[0].ref}, 2.0f, len);", f"AscendC::Exp({dst}, {dst}, len);",
            f"AscendC::Adds({dst}, {dst}, 1.0f, len);", f"AscendC::Reciprocal({dst}, {dst}, len);",
            f"AscendC::Muls({dst}, {dst}, -2.0f, len);", f"AscendC::Adds({dst}, {dst}, 1.0f, len);"]


def _scaled_unary(api: str, factor: float, before: bool) -> Writer:
    """exp2(x) = exp(x ln 2); log2(x) = ln(x) / ln 2 (as one multiply: the constant is rounded once)."""
    def write(dst, a, k):
        if before:
            return [f"AscendC::Muls({dst}, {a[0].ref}, {lit(factor)}, len);", f"AscendC::{api}({dst}, {dst}, len);"]
        return [f"AscendC::{api}({dst}, {a[0].ref}, len);", f"AscendC::Muls({dst}, {dst}, {lit(factor)}, len);"]
    return write


def _clamp(dst, a, k):
    lo = a[1] if len(a) > 1 else k.get("min")
    hi = a[2] if len(a) > 2 else k.get("max")
    if any(v is not None and v.kind != "scalar" for v in (lo, hi)):
        raise Unsupported("clamp with tensor bounds")
    steps, src = [], a[0].ref
    if lo is not None:
        steps.append(f"AscendC::Maxs({dst}, {src}, {lo.ref}, len);")
        src = dst
    if hi is not None:
        steps.append(f"AscendC::Mins({dst}, {src}, {hi.ref}, len);")
    return steps or [f"AscendC::Muls({dst}, {src}, 1.0f, len);"]


def _pow(dst, a, k):
    base, exp = a
    if base.kind != "tile" or exp.kind != "scalar":
        raise Unsupported("pow other than tensor ** constant")
    forms = {"1.0f": [f"AscendC::Muls({dst}, {base.ref}, 1.0f, len);"],
             "2.0f": [f"AscendC::Mul({dst}, {base.ref}, {base.ref}, len);"],
             "3.0f": [f"AscendC::Mul({dst}, {base.ref}, {base.ref}, len);", f"AscendC::Mul({dst}, {dst}, {base.ref}, len);"],
             "0.5f": [f"AscendC::Sqrt({dst}, {base.ref}, len);"],
             "-1.0f": [f"AscendC::Reciprocal({dst}, {base.ref}, len);"],
             "-0.5f": [f"AscendC::Rsqrt({dst}, {base.ref}, len);"]}
    if exp.ref not in forms:
        raise Unsupported(f"pow with exponent {exp.ref}")
    return forms[exp.ref]


WRITERS: dict[str, Writer] = {
    "aten.add.Tensor": _scaled("+"), "aten.add.Scalar": _scaled("+"), "prims.add.default": _scaled("+"),
    "aten.sub.Tensor": _scaled("-"), "aten.sub.Scalar": _scaled("-"), "prims.sub.default": _scaled("-"),
    "aten.rsub.Scalar": _rsub, "aten.rsub.Tensor": _rsub,
    "aten.mul.Tensor": _commutative("Mul", "Muls"), "aten.mul.Scalar": _commutative("Mul", "Muls"),
    "prims.mul.default": _commutative("Mul", "Muls"),
    "aten.div.Tensor": _div, "aten.div.Scalar": _div, "aten.div.Tensor_mode": _div, "prims.div.default": _div,
    "aten.maximum.default": _commutative("Max", "Maxs"), "aten.minimum.default": _commutative("Min", "Mins"),
    "aten.clamp_min.default": _commutative("Max", "Maxs"), "aten.clamp_max.default": _commutative("Min", "Mins"),
    "aten.clamp.default": _clamp,
    "aten.neg.default": lambda dst, a, k: [f"AscendC::Muls({dst}, {a[0].ref}, -1.0f, len);"],
    "aten.abs.default": _unary("Abs"), "aten.exp.default": _unary("Exp"), "aten.log.default": _unary("Ln"),
    "aten.sqrt.default": _unary("Sqrt"), "aten.rsqrt.default": _unary("Rsqrt"),
    "aten.reciprocal.default": _unary("Reciprocal"), "aten.relu.default": _unary("Relu"),
    "aten.sigmoid.default": _sigmoid, "aten.tanh.default": _tanh,
    "aten.exp2.default": _scaled_unary("Exp", math.log(2.0), True),
    "aten.log2.default": _scaled_unary("Ln", 1 / math.log(2.0), False),
    "aten.log10.default": _scaled_unary("Ln", 1 / math.log(10.0), False),
    "aten.pow.Tensor_Scalar": _pow,
}

# Scalar-only arithmetic (two scalars in, a C++ expression out), as torch computes it in fp32.
SCALAR_OPS = {"aten.add.Tensor": "+", "aten.add.Scalar": "+", "aten.sub.Tensor": "-", "aten.sub.Scalar": "-",
              "aten.mul.Tensor": "*", "aten.mul.Scalar": "*", "aten.div.Tensor": "/", "aten.div.Scalar": "/"}


def scalar_expr(target: str, args: list[Value], kwargs: dict) -> str:
    """An op whose operands are all scalars, as one C++ float expression."""
    if target == "aten.neg.default":
        return f"(-{args[0].ref})"
    if target not in SCALAR_OPS or kwargs.get("alpha", 1) != 1 or kwargs.get("rounding_mode") is not None:
        raise Unsupported(f"{target} of scalars only")
    return f"({args[0].ref} {SCALAR_OPS[target]} {args[1].ref})"
