"""Triton text both sort kernels share: rendering one node's value as an expression (fp32 registers
for floats, rounded to the node's own dtype after every op, as the reference rounds), and the
round-to-nearest-even fp32 -> bf16 helper (Triton's interpreter truncates that cast)."""
from __future__ import annotations

import torch
from torch.fx import Node

from opforge.backends.triton.emit.exprs import EXPR, TL_DTYPES
from opforge.codegen.exprs import Var
from opforge.codegen.lower import Unsupported, val

FLOATS = (torch.float32, torch.float16, torch.bfloat16)
CASTS = {"aten._to_copy.default", "prims.convert_element_type.default"}

ROUND_BF16 = '''

@triton.jit
def {name}(x):
    """fp32 -> the nearest bf16 (ties to even), kept in fp32; NaN stays NaN."""
    bits = x.to(tl.int32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & -65536
    return tl.where(x != x, x, bits.to(tl.float32, bitcast=True))
'''


def register(dtype: torch.dtype) -> str:
    """The Triton dtype a value of `dtype` is held in: fp32 for every float, itself otherwise."""
    if dtype in FLOATS:
        return "tl.float32"
    if dtype not in TL_DTYPES or dtype == torch.float64:
        raise Unsupported(f"{dtype} values")
    return TL_DTYPES[dtype]


def rounded(expr: str, dtype: torch.dtype, round_bf16: str) -> str:
    """`expr` (fp32) rounded to `dtype` and held in fp32 again."""
    if dtype == torch.bfloat16:
        return f"{round_bf16}({expr})"
    if dtype == torch.float16:
        return f"({expr}).to(tl.float16).to(tl.float32)"
    return expr


def stored(expr: str, dtype: torch.dtype) -> str:
    """A register value converted for a store of `dtype` (already rounded to it: exact)."""
    return f"({expr}).to({TL_DTYPES[dtype]})"


def elementwise(node: Node, args: list, kwargs: dict, round_bf16: str) -> str:
    """One elementwise node as a Triton expression of its rendered arguments (Var or a number)."""
    dtype, target = val(node).dtype, str(node.target)
    if target in CASTS:
        source = args[0]
        if dtype in FLOATS:
            return rounded(f"{source}.to(tl.float32)" if isinstance(source, Var) else repr(float(source)),
                           dtype, round_bf16)
        return f"{source}.to({register(dtype)})"
    expr = EXPR[target](args, kwargs)
    return rounded(expr, dtype, round_bf16) if dtype in FLOATS else expr
