"""The Python side of a row-wise launcher, shared by every backend: the inputs placed in the row
layout (the reduced dims moved last, flattened to [rows, cols]; a view where strides allow), the
outputs allocated and viewed back in the reference's shape. A backend's launch.py writes what lies
between: how each input becomes a kernel argument and how each kernel is launched."""
from __future__ import annotations

from torch.fx import Node

from opforge.codegen.families.rowwise.layout import Plan
from opforge.codegen.lower import val
from opforge.codegen.views import leaf_replay

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


def reduced_lines(plan: Plan) -> str:
    """`REDUCED = ...` with the comment that says how its dims are counted."""
    graph_dims = tuple(d + plan.rank for d in plan.dims)
    side = "left, as the reference wrote them" if plan.from_left else "right"
    return (f"\n\n# The reduced dims (the graph's {list(graph_dims)} of its rank-{plan.rank} tensors), counted from the "
            f"{side},\n# so inputs of another rank reduce the same dims as the reference.\n"
            f"REDUCED = {graph_dims if plan.from_left else tuple(plan.dims)!r}\n")


def leaf_names(plan: Plan, taken: set[str]) -> tuple[dict[Node, str], dict[Node, str]]:
    """(the launcher's parameter per graph input, every leaf's local: an input, or an input's
    regrouping view rebuilt in the launcher)."""
    args = arg_names(plan, taken)
    names = dict(args)
    names.update({v: f"{v.name}_leaf" for v in plan.leaves})
    return args, names


def head_lines(plan: Plan, args: dict[Node, str], names: dict[Node, str], used: list[Node]) -> list[str]:
    """The launcher's first lines: its signature, the `used` leaves rebuilt and placed, and the row
    layout (shape, dims, kept, n_rows, n_cols) and device."""
    lines = [f"def {plan.title}({', '.join(args.values())}):"]
    lines += [f"    {names[v]} = {leaf_replay(v, args[p])}  # {v.name}, sizes from the input"
              for v, p in plan.leaves.items() if v in used]
    lines += [f"    {names[n]} = {names[n]}{placement(plan, n)}" for n in used if placement(plan, n)]
    shapes = ", ".join(f"{names[n]}.shape" for n in used)
    lines.append(f"    shape = torch.broadcast_shapes({shapes})" if len(used) > 1 else
                 f"    shape = {names[used[0]]}.shape")
    return lines + ["    dims = tuple(sorted(d % len(shape) for d in REDUCED))",
                    "    kept = tuple(1 if i in dims else s for i, s in enumerate(shape))",
                    "    n_rows, n_cols = math.prod(kept), math.prod(shape[d] for d in dims)",
                    f"    dev = {names[used[0]]}.device"]


def output_allocations(plan: Plan) -> list[str]:
    """One buffer per output: [rows, cols], per row, or 0-d."""
    lines = []
    for i, out in enumerate(plan.outputs):
        size = {"cols": "(n_rows, n_cols)", "row": "n_rows", "scalar": "()"}[out.kind]
        lines.append(f"    out{i} = torch.empty({size}, dtype={val(out.node).dtype}, device=dev)")
    return lines


def return_lines(plan: Plan) -> list[str]:
    """The outputs in the reference's shape (a regrouping view of a result, as the reference ends
    with, rebuilt), returned."""
    values, lines = results(plan), []
    for i, out in enumerate(plan.outputs):
        if out.view is not None:
            lines.append(f"    res{i} = {values[i]}")
            values[i] = leaf_replay(out.view, f"res{i}")
    return lines + [f"    return {', '.join(values)}"]
