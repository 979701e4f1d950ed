"""Names and pieces the row-wise Triton kernels share: a kernel's text and parameters, safe local
names, and one elementwise node rendered as a Triton expression."""
from __future__ import annotations

import keyword
from dataclasses import dataclass, field

import torch
from torch.fx import Node

from opforge.backends.triton.emit.exprs import DIV_RN, EXPR_FP8, FP8_HELPERS
from opforge.codegen.families.rowwise.layout import Plan, node_args
from opforge.codegen.lower import val

RESERVED = {"row", "rows", "cols", "c", "c_rev", "mask", "row_mask", "start", "offs", "r", "valid", "n_rows",
            "n_cols", "numel", "size0", "BLOCK", "ROWS", "tl", "triton", "torch", "math", "glob_ptr"}


@dataclass
class KernelText:
    name: str
    source: str
    params: list[tuple[str, str]]  # (kernel parameter, what the launcher passes)
    grid: str  # "rows": one program per ROWS rows; "one": a single program
    helpers: set[str] = field(default_factory=set)
    globals: dict[Node, int] = field(default_factory=dict)  # apply kernel: global values it loads


def view_name(node: Node) -> str:
    """The launcher's [rows, cols] view of an input (suffix chosen not to meet n_rows, n_cols...)."""
    return f"{node.name}_2d"


def safe(name: str) -> str:
    return name + "_v" if name in RESERVED or keyword.iskeyword(name) else name


def render(plan: Plan, node: Node, arg, order: tuple[str, ...], used: set[str], helpers: set[str]) -> str:
    """One elementwise node as a Triton expression; `arg(node)` renders its inputs. Casts to fp8 call
    exprs.FP8_HELPERS (their names go into `helpers`); a quotient that is quantised next
    (plan.exact) is IEEE-rounded."""
    target = str(node.target)
    table = DIV_RN if _ieee_division(plan, node) else EXPR_FP8
    expr = table[target](node_args(plan, node, arg, order, used), dict(node.kwargs))
    helpers |= {name for name in FP8_HELPERS if name + "(" in expr}
    return expr


def _ieee_division(plan: Plan, node: Node) -> bool:
    """A quantised fp32 quotient of fp32 values (tl.math.div_rn takes fp32 only; fp64's `/` is IEEE
    already)."""
    return node in plan.exact and all(val(n).dtype == torch.float32 for n in (node, *node.all_input_nodes))
