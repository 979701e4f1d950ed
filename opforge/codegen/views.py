"""Views at the edges of a graph that a launcher replays from run-time sizes: an input regrouped
into more or fewer dims before any op (GroupNorm's [N, C, H, W] -> [N, G, C/G, H, W], a per-head
norm's [B, T, H*D] -> [B, T, H, D]), an input sliced or indexed (GLU's halves, `chunk`, a column),
and an output viewed back. Generators treat such a view of an input as a leaf the launcher rebuilds.
Sizes are read from the tensor at run time (`x.shape[1] // 8`); only what the reference wrote as a
constant (the group count, an index) stays literal. A slice bound torch.export baked from a size is
read back as a fraction or an offset of that size (`x.shape[1] * 1 // 2`, `x.shape[1] - 1`)."""
from __future__ import annotations

import ast
import math

from torch.fx import Node

from opforge.codegen.lower import Lowered, Unsupported, val

RESHAPES = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default"}
INDEXING = {"aten.slice.Tensor", "aten.select.int"}
PERMUTES = {"aten.permute.default", "aten.transpose.int", "aten.t.default"}


def _regrouping(node: Node) -> bool:
    """A reshape that splits or merges dims (not only adding or dropping size-1 dims)."""
    if not (isinstance(node, Node) and node.op == "call_function" and str(node.target) in RESHAPES):
        return False
    src, out = tuple(val(node.args[0]).shape), tuple(val(node).shape)
    return [s for s in src if s != 1] != [s for s in out if s != 1]


def groups(src: tuple[int, ...], out: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Pairs (source dims, output dims) of equal products over the non-1 dims, in order."""
    a = [i for i, s in enumerate(src) if s != 1]
    b = [j for j, s in enumerate(out) if s != 1]
    groups, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        gs, go = [a[i]], [b[j]]
        i, j = i + 1, j + 1
        while math.prod(src[d] for d in gs) != math.prod(out[d] for d in go):
            if math.prod(src[d] for d in gs) < math.prod(out[d] for d in go) and i < len(a):
                gs.append(a[i])
                i += 1
            elif j < len(b):
                go.append(b[j])
                j += 1
            else:
                raise Unsupported(f"a reshape of {list(src)} to {list(out)}")
        if len(gs) > 1 and len(go) > 1:
            raise Unsupported(f"a reshape of {list(src)} to {list(out)} that regroups several dims at once")
        groups.append((tuple(gs), tuple(go)))
    if i != len(a) or j != len(b):
        raise Unsupported(f"a reshape of {list(src)} to {list(out)}")
    return groups


def replay(node: Node, t: str) -> str:
    """Torch code taking tensor `t` (shaped like node's input) to node's output, sizes read from `t`."""
    src, out = tuple(val(node.args[0]).shape), tuple(val(node).shape)
    sizes = ["1"] * len(out)
    for gs, go in groups(src, out):
        if len(go) == 1:  # one dim, or a merge of several
            sizes[go[0]] = " * ".join(f"{t}.shape[{d}]" for d in gs)
        else:  # a split: the leading factors as the reference wrote them, the last one what remains
            lead = [out[d] for d in go[:-1]]
            for d, size in zip(go, lead):
                sizes[d] = str(size)
            sizes[go[-1]] = f"{t}.shape[{gs[0]}] // {math.prod(lead)}"
    return f"{t}.reshape({', '.join(sizes)})"


def bound_form(value: int, size: int) -> tuple:
    """A slice bound torch.export wrote for one size, read back as a form of the run-time size n:
    ("zero",), ("full",) n, ("frac", a, q) n * a // q, ("off", k) n - k or ("lit", v)."""
    if value <= 0 or value >= size:
        return ("zero",) if value <= 0 else ("full",)
    for q in range(2, 9):
        if value * q % size == 0:
            return ("frac", value * q // size, q)
    return ("off", size - value) if size - value <= 8 else ("lit", value)


def bound_code(form: tuple, n: str) -> str:
    """A bound_form as Python code of the size expression `n`."""
    kind, *a = form
    return {"zero": lambda: "0", "full": lambda: n, "frac": lambda: f"{n} * {a[0]} // {a[1]}",
            "off": lambda: f"{n} - {a[0]}", "lit": lambda: str(a[0])}[kind]()


def _bound(value: int, size: int, t: str, dim: int) -> str:
    """A slice bound as an expression of `t.shape[dim]`: torch.export wrote it for one size."""
    return bound_code(bound_form(value, size), f"{t}.shape[{dim}]")


def _after_ellipsis(node: Node) -> int:
    """How many dims the reference's subscript indexes after an Ellipsis (`x[..., :d]`: 1), read from
    the source line torch.export recorded; 0 when there is none. Python indexing reaches the graph
    with dims counted from the left, so only the written line says they were counted from the right."""
    lines = str(node.meta.get("stack_trace") or "").strip().splitlines()
    try:
        tree = ast.parse(lines[-1].strip()) if lines else None
    except SyntaxError:
        return 0
    counts = [0]
    for sub in ast.walk(tree) if tree else ():
        items = sub.slice.elts if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Tuple) else []
        marks = [i for i, e in enumerate(items) if isinstance(e, ast.Constant) and e.value is Ellipsis]
        counts += [len(items) - 1 - marks[0]] if marks else []
    return max(counts)


def _written_dim(node: Node, rank: int) -> int:
    """The dim as the reference counted it: a dim after an Ellipsis (x[..., :d], x[..., 0]) from the right."""
    dim = node.args[1]
    return dim - rank if 0 <= rank - dim <= _after_ellipsis(node) else dim


def index_replay(node: Node, t: str) -> str:
    """Torch code taking `t` to a slice (step 1) or a select of it; the dim keeps the side the
    reference counted it from, so an input of another rank slices the same dim."""
    shape = tuple(val(node.args[0]).shape)
    written = _written_dim(node, len(shape))
    dim = written % len(shape)
    if str(node.target) == "aten.select.int":
        return f"{t}.select({written}, {node.args[2]})"
    start = node.args[2] if len(node.args) > 2 and node.args[2] is not None else 0
    end = node.args[3] if len(node.args) > 3 and node.args[3] is not None else shape[dim]
    step = node.args[4] if len(node.args) > 4 else 1
    if step != 1:
        raise Unsupported(f"a slice with step {step}")
    start, end = (v + shape[dim] if v < 0 else v for v in (start, end))
    lo = _bound(start, shape[dim], t, written)
    hi = _bound(min(end, shape[dim]), shape[dim], t, written)
    if lo == "0" and hi == f"{t}.shape[{written}]":
        return t
    return f"{t}.narrow({written}, {lo}, {hi if lo == '0' else f'{hi} - ({lo})'})"


def slice_args(node: Node) -> tuple[int, int, int, int]:
    """An aten.slice.Tensor's (dim, start, end, step), the bounds made non-negative and clamped to
    the export's size of the sliced dim (torch.export writes a slice to the end as 2**63 - 1)."""
    shape = tuple(val(node.args[0]).shape)
    dim = node.args[1] % len(shape)
    start = node.args[2] if len(node.args) > 2 and node.args[2] is not None else 0
    end = node.args[3] if len(node.args) > 3 and node.args[3] is not None else shape[dim]
    step = node.args[4] if len(node.args) > 4 else 1
    start, end = (min(max(v + shape[dim] if v < 0 else v, 0), shape[dim]) for v in (start, end))
    return dim, start, end, step


def permutation(node: Node, rank: int) -> list[int]:
    """A permute, transpose or t node as an order: output dim i is input dim p[i] (`rank`: the input's)."""
    target, perm = str(node.target), list(range(rank))
    if target == "aten.t.default":
        perm.reverse()
    elif target == "aten.transpose.int":
        i, j = node.args[1] % rank, node.args[2] % rank
        perm[i], perm[j] = perm[j], perm[i]
    else:
        perm = [d % rank for d in node.args[1]]
    return perm


def permute_replay(node: Node, t: str) -> str:
    target = str(node.target)
    if target == "aten.t.default":
        return f"{t}.t()"
    if target == "aten.transpose.int":  # as written: a negative dim stays counted from the right
        return f"{t}.transpose({node.args[1]}, {node.args[2]})"
    return f"{t}.permute({', '.join(str(d) for d in node.args[1])})"


def leaf_replay(node: Node, t: str) -> str:
    """The launcher's code for a view of `t` at the graph's edge (an input's, or the output's)."""
    target = str(node.target)
    if target in INDEXING:
        return index_replay(node, t)
    return permute_replay(node, t) if target in PERMUTES else replay(node, t)


def _edge_view(node: Node) -> bool:
    return _regrouping(node) or node.op == "call_function" and str(node.target) in PERMUTES


def _leaf_view(node: Node) -> bool:
    return _edge_view(node) or node.op == "call_function" and str(node.target) in INDEXING


def edges(lowered: Lowered) -> tuple[dict[Node, Node], set[Node], dict[Node, Node]]:
    """(leaf views -> their input, inputs consumed by them, output views -> their source)."""
    leaves, consumed, post = {}, set(), {}
    for node in lowered.graph.nodes:
        if node.op != "placeholder" or not node.users:
            continue
        if all(_leaf_view(user) for user in node.users):
            leaves.update({user: node for user in node.users})
            consumed.add(node)
    for node in lowered.outputs:
        if isinstance(node, Node) and _edge_view(node) and node not in leaves and len(node.users) == 1:
            post[node] = node.args[0]
    return leaves, consumed, post
