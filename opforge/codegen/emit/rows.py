"""The Python side of a row-wise launcher, shared by every backend: the inputs placed in the row
layout (the reduced dims moved last, flattened to [rows, cols]; a view where strides allow) and the
outputs viewed back in the reference's shape."""
from __future__ import annotations

from torch.fx import Node

from opforge.codegen.families.rowwise.layout import Plan

AS_ROWS_PY = '''
def _as_rows(t, shape, dims):
    """`t` broadcast to `shape`, `dims` moved last, as [rows, cols] (a view where strides allow)."""
    t = t.expand(shape).movedim(dims, tuple(range(len(shape) - len(dims), len(shape))))
    return t.reshape(-1, math.prod(t.shape[len(shape) - len(dims):]))


def _from_rows(out, shape, dims):
    """A [rows, cols] result back in `shape`: the inverse of _as_rows."""
    moved = [s for i, s in enumerate(shape) if i not in dims] + [shape[d] for d in dims]
    return out.view(moved).movedim(tuple(range(len(shape) - len(dims), len(shape))), dims)


'''


def arg_names(plan: Plan, taken: set[str]) -> dict[Node, str]:
    """The launcher's parameter per graph input, renamed where it would meet one of its locals."""
    return {n: n.name + "_in" if n.name in taken or n.name.startswith(("out", "part_", "res")) else n.name
            for n in plan.lowered.graph.nodes if n.op == "placeholder"}


def placement(plan: Plan, node: Node) -> str:
    """Views that put an input's dims where the reduced tensor has them (a [B] target of a [B, C]
    row reduction becomes [B, 1]); empty when right-aligned broadcasting already does."""
    m = plan.maps[node]
    r = len(m)
    if all(c is None or c == i - r for i, c in enumerate(m)):
        return ""
    views = ""
    ones = tuple(i - r for i, c in enumerate(m) if c is None)
    if ones:
        views += f".squeeze({ones!r})"
    placed = [c for c in m if c is not None]
    for q in range(-1, min(placed), -1):
        if q not in placed:
            views += f".unsqueeze({q})"
    return views


def results(plan: Plan) -> list[str]:
    """Each output's expression: the [rows, cols] or per-row buffer viewed back in the reference's shape."""
    exprs = []
    for i, out in enumerate(plan.outputs):
        if out.kind == "cols":
            exprs.append(f"_from_rows(out{i}, shape, dims)")
        elif out.kind == "row":
            squeezed = "kept" if out.keepdim else "[s for i, s in enumerate(shape) if i not in dims]"
            exprs.append(f"out{i}.view({squeezed})")
        else:
            exprs.append(f"out{i}")
    return exprs
