"""Reading a graph for the row-wise family: which dims are reduced, and where each value lives
(the Plan of layout.py)."""
from __future__ import annotations

import torch
from torch.fx import Node

from opforge.codegen.exprs import ELEMENTWISE
from opforge.codegen.families.rowwise.frames import place
from opforge.codegen.families.rowwise.layout import (ALIASES, CONSTANTS, DIVISIONS, FLIP, FULL_KINDS, GETITEM,
                                                     MOMENTS, PAIRED, REDUCE_OPS, SCAN_OPS, SHAPE_VIEWS, Output,
                                                     Plan, Reduce, rank_of)
from opforge.codegen.lower import Lowered, Unsupported, arg, val
from opforge.codegen.views import edges


def analyse(lowered: Lowered, title: str) -> Plan:
    plan = Plan(lowered, title)
    plan.leaves, plan.consumed, plan.post = edges(lowered)
    nodes = [n for n in lowered.graph.nodes if n.op == "call_function" and n not in plan.leaves
             and n not in plan.post]
    _check_ops(nodes)
    for node in nodes:
        if str(node.target) in REDUCE_OPS:
            plan.reduces[node] = _parse_reduce(node)
        elif str(node.target) in SCAN_OPS:
            plan.scans[node] = SCAN_OPS[str(node.target)]
    if not plan.reduces and not plan.scans:
        raise Unsupported("no reduction or scan: not a row-wise graph")
    _choose_dims(plan)
    plan.after = _after_reduction(plan)
    planned = [n for n in lowered.graph.nodes if n not in plan.consumed and n not in plan.post]
    place(plan, planned)
    _classify(plan, planned)
    _outputs(plan)
    plan.exact = _quantised_quotients(plan, planned)
    return plan


# --- reading the ops -----------------------------------------------------------------------------

def _supported(node: Node) -> bool:
    target = str(node.target)
    if target == GETITEM:
        return str(node.args[0].target) in PAIRED
    return any(target in table for table in (ELEMENTWISE, SHAPE_VIEWS, REDUCE_OPS, SCAN_OPS, CONSTANTS)) or target == FLIP


def _check_ops(nodes: list[Node]) -> None:
    bad = sorted({str(n.target) for n in nodes if not _supported(n) and str(n.target) != GETITEM})
    bad = bad or sorted({str(n.args[0].target) for n in nodes if not _supported(n)})
    if bad:
        raise Unsupported(f"row-wise generator cannot handle {', '.join(bad)}")


def _parse_reduce(node: Node) -> Reduce:
    kind, style = REDUCE_OPS[str(node.target)]
    source = node.args[0]
    rank = val(source).dim()
    correction, keepdim = 0.0, False
    if style == "all":
        dims = None
    elif style == "prims":
        dims = arg(node, 1, "dims")
        correction = float(arg(node, 2, "correction", 0.0) or 0.0)
    elif style == "var":
        dims, keepdim = arg(node, 1, "dim"), bool(node.kwargs.get("keepdim", False))
        correction = node.kwargs.get("correction")
        correction = 1.0 if correction is None else float(correction)
    elif style == "var_dim":
        dims, keepdim = arg(node, 1, "dim"), bool(arg(node, 3, "keepdim", False))
        correction = 1.0 if arg(node, 2, "unbiased", True) else 0.0
    elif style == "gather":
        dims, keepdim = arg(node, 1, "dim"), True
        _check_gather(node, dims)
    else:
        dims, keepdim = arg(node, 1, "dim"), bool(arg(node, 2, "keepdim", False))
    if isinstance(dims, int):
        dims = [dims]
    norm = tuple(range(-rank, 0)) if not dims else tuple(sorted({d - rank if d >= 0 else d for d in dims}))
    index = node.args[2] if style == "gather" else None
    return Reduce(kind, source, norm, keepdim, correction, from_left=_from_left(node, dims or [], norm), index=index)


def _check_gather(node: Node, dim: int) -> None:
    """A gather is a row value when it takes one element per row: its index has size 1 along `dim`
    and the source's sizes elsewhere (torch.gather(logp, 1, target.unsqueeze(1)))."""
    source, index = val(node.args[0]), val(node.args[2])
    if len(node.args) > 3 and node.args[3] or node.kwargs.get("sparse_grad"):
        raise Unsupported("aten.gather with sparse_grad")
    if index.dim() != source.dim() or index.shape[dim] != 1 or any(
            i != s for d, (i, s) in enumerate(zip(index.shape, source.shape)) if d != dim % source.dim()):
        raise Unsupported(f"aten.gather of {list(index.shape)} indices from {list(source.shape)}: "
                          "only one index per row is fused")


def _from_left(node: Node, written: list[int], norm: tuple[int, ...]) -> bool:
    """How the reference counts a dim, which matters when a variant has more dims than the export.
    aten ops keep the sign the user wrote (cumsum(x, 1): from the left; softmax(x, -1): from the
    right). prims ops come from decompositions that made dims non-negative (var(x, -1) becomes
    prims.var(x, [1]), LayerNorm's trailing dims too): trailing dims are taken from the right."""
    if str(node.target).startswith("prims."):
        return norm != tuple(range(-len(norm), 0))
    return bool(written) and all(d >= 0 for d in written)


# --- the reduced dims D and the rank R -------------------------------------------------------------

def _choose_dims(plan: Plan) -> None:
    """R is the largest reduced rank; D the dims its reductions and scans agree on. A reduction over
    every dim is full (global) unless the tensors are 1-D, where a row is the whole tensor."""
    ranks = {val(r.source).dim() for r in plan.reduces.values()} | {rank_of(n) for n in plan.scans}
    plan.rank = rank = max(ranks)
    if rank == 0:
        raise Unsupported("a reduction of a 0-d tensor")
    every = tuple(range(-rank, 0))
    partial = {r.dims for r in plan.reduces.values() if val(r.source).dim() == rank and r.dims != every}
    partial |= {(_scan_dim(n),) for n in plan.scans}
    if len(partial) > 1:
        raise Unsupported(f"reductions over different dims {sorted(partial)} in one graph")
    plan.dims = partial.pop() if partial else (-1,)
    for node, red in plan.reduces.items():
        if val(red.source).dim() == rank and (red.dims == plan.dims or rank == 1):
            plan.reduces[node] = Reduce(red.kind, red.source, plan.dims, red.keepdim, red.correction,
                                        from_left=red.from_left, index=red.index)
        elif red.dims == _every(red.source):
            _check_full(node, red)
            plan.reduces[node] = Reduce(red.kind, red.source, red.dims, red.keepdim, red.correction, full=True)
        else:
            raise Unsupported(f"{node.target} over dims {list(red.dims)} of a reduced value")
    if plan.scans and len(plan.dims) != 1:
        raise Unsupported("a scan together with a reduction over several dims")
    if any(r.kind == "pick" and (r.full or len(r.dims) != 1) for r in plan.reduces.values()):
        raise Unsupported("aten.gather along several dims")
    plan.from_left = _sides(plan)


def _every(node: Node) -> tuple[int, ...]:
    return tuple(range(-val(node).dim(), 0))


def _check_full(node: Node, red: Reduce) -> None:
    if red.kind not in FULL_KINDS:
        raise Unsupported(f"{node.target} over every dim of a multi-dim tensor")
    if red.keepdim and val(node).dim() > 0:
        raise Unsupported(f"{node.target} over every dim with keepdim=True")


def _scan_dim(node: Node) -> int:
    dim, rank = arg(node, 1, "dim"), rank_of(node)
    return dim - rank if dim >= 0 else dim


def _sides(plan: Plan) -> bool:
    """Whether the launcher counts the reduced dims from the left: only when every row reduction and
    scan was written that way."""
    sides = [r.from_left for r in plan.reduces.values() if not r.full]
    sides += [arg(n, 1, "dim") >= 0 for n in plan.scans]
    return bool(sides) and all(sides)


def _after_reduction(plan: Plan) -> dict[Node, bool]:
    """Whether a value depends on a reduction's result (placeholders: False)."""
    after: dict[Node, bool] = {}
    for node in plan.lowered.graph.nodes:
        after[node] = any(after.get(a, False) or a in plan.reduces for a in node.all_input_nodes)
    return after


# --- what varies where -------------------------------------------------------------------------------

def _classify(plan: Plan, nodes: list[Node]) -> None:
    for node in nodes:
        if plan.is_leaf(node):
            plan.cv[node] = _input_varies(plan, plan.maps[node])
            covered = tuple(d for d in plan.dims if d in plan.maps[node])
            k = len(covered)
            if plan.cv[node] and 0 < k < len(plan.dims) and covered in (plan.dims[:k], plan.dims[-k:]):
                plan.partial[node] = (k, covered == plan.dims[:k])
            plan.scope[node], plan.late[node] = "row", False
        elif node.op == "call_function":
            _classify_one(plan, node)


def _input_varies(plan: Plan, m: tuple) -> bool:
    """An input varies along the row if one of its dims sits in D. A size-1 dim where D is counts too
    when the input is right-aligned (a [B, 1] target): a variant may pass it full-size, and its
    stride 0 along the row keeps the broadcast case right."""
    r = len(m)
    aligned = all(c is None or c == i - r for i, c in enumerate(m))
    return any(c in plan.dims for c in m if c is not None) or aligned and any(
        i - r in plan.dims for i, c in enumerate(m) if c is None)


def _classify_one(plan: Plan, node: Node) -> None:
    args = node.all_input_nodes
    target = str(node.target)
    red = plan.reduces.get(node)
    if target == FLIP and (len(plan.dims) != 1 or {_norm(d, node) for d in node.args[1]} != set(plan.dims)):
        raise Unsupported(f"aten.flip over dims {list(node.args[1])}: only the reduced dim can be flipped")
    if red is not None and red.full:
        if plan.scope[red.source] != "row" or plan.late[red.source]:
            raise Unsupported(f"{target} of a value that needs another full reduction")
        if red.kind in MOMENTS and not plan.cv[red.source]:
            raise Unsupported(f"{target} over every dim of a value that is one per row")
        plan.cv[node], plan.scope[node], plan.late[node] = False, "global", False
        return
    if target in CONSTANTS:  # full_like(x, 0) takes only x's shape: a constant, whatever x holds
        plan.cv[node], plan.scope[node], plan.late[node] = False, "const", False
        return
    if red is not None and red.index is not None and plan.cv[red.index]:
        raise Unsupported(f"{target} with an index that varies along the row")
    scopes = {plan.scope[a] for a in args}
    plan.scope[node] = "row" if "row" in scopes else "global" if "global" in scopes else "const"
    plan.late[node] = plan.scope[node] == "row" and ("global" in scopes or any(plan.late[a] for a in args))
    plan.cv[node] = node in plan.scans or red is None and any(plan.cv[a] for a in args)


def _norm(dim: int, node: Node) -> int:
    return dim - val(node).dim() if dim >= 0 else dim


def _outputs(plan: Plan) -> None:
    full_shapes = [tuple(val(n).shape) for n in plan.maps
                   if isinstance(val(n), torch.Tensor) and val(n).dim() == plan.rank]
    plan.full_shape = tuple(torch.broadcast_shapes(*full_shapes))
    for node in plan.lowered.outputs:
        if node in plan.post:
            out = _output(plan, plan.post[node])
            out.view = node
            plan.outputs.append(out)
        else:
            plan.outputs.append(_output(plan, node))


def _output(plan: Plan, node) -> Output:
    if not isinstance(node, Node) or node.op == "placeholder":
        raise Unsupported("an output that is an input itself")
    scope, shape = plan.scope[node], tuple(val(node).shape)
    if scope == "const":
        raise Unsupported(f"output {node.name} is a constant")
    if scope == "global":
        if not shape:
            return Output(node, "scalar")
        source = node.args[0] if node.args and isinstance(node.args[0], Node) else None
        if set(shape) == {1} and source is not None and set(val(source).shape) <= {1}:
            return Output(node, "scalar", view=node)  # scale.reshape(1): the 0-d value, reshaped by the launcher
        raise Unsupported(f"global output {node.name} of shape {list(shape)}")
    rows = tuple(s for d, s in zip(range(-plan.rank, 0), plan.full_shape) if d not in plan.dims)
    cols = tuple(plan.full_shape[d] for d in plan.dims)
    m = plan.maps[node]
    keep = tuple(s for c, s in zip(m, shape) if c in plan.dims) if len(m) == plan.rank else ()
    kept = tuple(s for c, s in zip(m, shape) if c not in plan.dims)
    if kept != rows:
        raise Unsupported(f"output {node.name} of shape {list(shape)} does not cover the rows")
    if len(m) == plan.rank and keep == cols and (plan.cv[node] or set(cols) != {1}):
        return Output(node, "cols", late=plan.late[node])
    if len(m) == plan.rank and set(keep) <= {1}:
        return Output(node, "row", keepdim=True, late=plan.late[node])
    if len(m) == plan.rank - len(plan.dims) and not plan.cv[node]:
        return Output(node, "row", late=plan.late[node])
    raise Unsupported(f"output {node.name} of shape {list(shape)} fits no row layout")


# --- quotients that are quantised ----------------------------------------------------------------------

QUANTISERS = {"aten.round.default", "aten.round.decimals", "aten.floor.default", "aten.ceil.default",
              "aten.trunc.default"}
CASTS = {"aten._to_copy.default", "prims.convert_element_type.default"}
QUOTIENTS = DIVISIONS | {"aten.reciprocal.default"}  # x * (127 / absmax) reaches the graph as a reciprocal


def _quantised_quotients(plan: Plan, nodes: list[Node]) -> set[Node]:
    """Divisions (and reciprocals) from which an elementwise chain reaches a rounding op or a cast to an
    integer or an 8-bit float (q = round(x / (absmax / 127))): both divisions there, so q is the
    reference's at a tie."""
    exact = set()
    for node in nodes:
        if node.op == "call_function" and str(node.target) in QUOTIENTS and _reaches_quantiser(node):
            exact.add(node)
    return exact


def _reaches_quantiser(start: Node) -> bool:
    stack, seen = list(start.users), set()
    while stack:
        node = stack.pop()
        if node in seen or node.op != "call_function":
            continue
        seen.add(node)
        target = str(node.target)
        if target in QUANTISERS or target in CASTS and _quantising_cast(node):
            return True
        if target in ELEMENTWISE or target in SHAPE_VIEWS or target in ALIASES:
            stack += node.users
    return False


def _quantising_cast(node: Node) -> bool:
    dtype = val(node).dtype
    if dtype == torch.bool:
        return False
    return not dtype.is_floating_point or dtype.itemsize == 1
