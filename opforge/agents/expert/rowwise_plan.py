"""Reading a graph for the row-wise generator: which dims are reduced, and where each value lives.

Layout. Every reduction and scan of the graph reduces the same dims D; the launcher moves them last
and flattens, so each tensor is seen as [rows, cols]. Each graph value is then one of
  - col-varying: one value per element, recomputed inside the column loops from loads of the inputs;
  - a row value: one per row (a reduction over D, an input that broadcasts along D), [ROWS, 1] in the kernel;
  - global: a reduction over every dim (a loss's mean) and what is computed from it.
Graph dims are kept counted from the right, so the same candidate serves a 2-D and a 3-D input."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch.fx import Node

from opforge.agents.expert.exprs import EXPR
from opforge.agents.expert.lower import Lowered, Unsupported, arg, val
from opforge.agents.expert.rowwise_frames import SHAPE_VIEWS, _frames
from opforge.agents.expert.views import edges

# target -> (kind, argument style). Styles: "dims" (x, dim=None, keepdim=False), "all" (x),
# "prims" (x, dims), "var" (x, dim, *, correction, keepdim), "var_dim" (x, dim, unbiased, keepdim).
REDUCE_OPS = {
    "aten.sum.dim_IntList": ("sum", "dims"), "aten.sum.default": ("sum", "all"), "prims.sum.default": ("sum", "prims"),
    "aten.mean.dim": ("mean", "dims"), "aten.mean.default": ("mean", "all"),
    "aten.amax.default": ("max", "dims"), "prims.amax.default": ("max", "prims"), "aten.max.default": ("max", "all"),
    "aten.amin.default": ("min", "dims"), "prims.amin.default": ("min", "prims"), "aten.min.default": ("min", "all"),
    "aten.prod.dim_int": ("prod", "dims"), "aten.prod.default": ("prod", "all"), "prims.prod.default": ("prod", "prims"),
    "aten.argmax.default": ("argmax", "dims"), "aten.argmin.default": ("argmin", "dims"),
    "aten.max.dim": ("argmax", "dims"), "aten.min.dim": ("argmin", "dims"),  # (values, indices)
    "aten.any.dim": ("any", "dims"), "aten.any.dims": ("any", "dims"), "aten.any.default": ("any", "all"),
    "aten.all.dim": ("all", "dims"), "aten.all.dims": ("all", "dims"), "aten.all.default": ("all", "all"),
    "aten.var.correction": ("var", "var"), "aten.var.dim": ("var", "var_dim"), "prims.var.default": ("var", "prims"),
    "aten.std.correction": ("std", "var"), "aten.std.dim": ("std", "var_dim"),
    # gather(x, dim, index) with one index per row: the value at that column (cross-entropy, NLL)
    "aten.gather.default": ("pick", "gather"),
}
SCAN_OPS = {"aten.cumsum.default": "cumsum", "aten.cumprod.default": "cumprod"}
FLIP, GETITEM = "aten.flip.default", "<built-in function getitem>"
CONSTANTS = {"aten.scalar_tensor.default": 0, "aten.full.default": 1}  # target -> index of the value
# Full reductions combine per-row partials; these kinds combine exactly (mean: sums, divided once).
FULL_KINDS = {"sum", "mean", "max", "min", "prod", "any", "all"}


@dataclass(frozen=True)
class Reduce:
    """One reduction node, its arguments normalised: dims counted from the right."""

    kind: str  # sum mean max min prod argmax argmin any all var std
    source: Node
    dims: tuple[int, ...]
    keepdim: bool
    correction: float = 0.0
    full: bool = False  # over every dim: a global value, finished by a second kernel
    from_left: bool = False  # the reference counts these dims from the left (torch.sum(x, dim=1))
    index: Node | None = None  # pick: the row value holding the column to take


@dataclass
class Output:
    node: Node
    kind: str  # "cols" (one value per element), "row" (one per row), "scalar" (0-d, global)
    keepdim: bool = False  # a row output that keeps the reduced dims as size 1
    late: bool = False  # needs a global value: written by the apply kernel after the finish kernel
    view: Node | None = None  # a regrouping view of the result, replayed by the launcher


@dataclass
class Plan:
    lowered: Lowered
    title: str
    rank: int = 0  # R: rank of the reduced tensors in the graph
    dims: tuple[int, ...] = ()  # D, negative
    from_left: bool = False  # the launcher counts D from the left (see _from_left)
    reduces: dict[Node, Reduce] = field(default_factory=dict)
    scans: dict[Node, str] = field(default_factory=dict)
    maps: dict[Node, tuple] = field(default_factory=dict)  # node dim -> canonical dim (negative) or None
    cv: dict[Node, bool] = field(default_factory=dict)  # col-varying
    scope: dict[Node, str] = field(default_factory=dict)  # "row" | "global" | "const"
    late: dict[Node, bool] = field(default_factory=dict)  # a row value that depends on a global one
    outputs: list[Output] = field(default_factory=list)
    full_shape: tuple[int, ...] = ()  # the reduced tensors' shape at export
    leaves: dict[Node, Node] = field(default_factory=dict)  # an input's regrouping view -> the input
    consumed: set[Node] = field(default_factory=set)  # inputs only seen through such views
    post: dict[Node, Node] = field(default_factory=dict)  # an output's regrouping view -> its source
    # A leaf that varies along only the first k reduced dims (outer) or the last k (inner), repeating
    # along the others (GroupNorm's per-channel weight): read at column c // inner or c % inner.
    partial: dict[Node, tuple[int, bool]] = field(default_factory=dict)

    def is_leaf(self, node: Node) -> bool:
        """A tensor the kernels load: an input, or an input's regrouping view the launcher rebuilds."""
        return node.op == "placeholder" and node not in self.consumed or node in self.leaves
    after: dict[Node, bool] = field(default_factory=dict)  # depends on a reduction's result

    def counts(self) -> dict[str, int]:
        """Export-time counts that literals in the graph may stand for (a mean's divisor, batchmean)."""
        cols = math.prod(self.full_shape[d] for d in self.dims)
        numel = math.prod(self.full_shape)
        return {"n_cols": cols, "numel": numel, "size0": self.full_shape[0], "n_rows": numel // max(cols, 1)}


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
    _frames(plan, planned)
    _classify(plan, planned)
    _outputs(plan)
    return plan


# --- reading the ops -----------------------------------------------------------------------------

def _supported(node: Node) -> bool:
    target = str(node.target)
    if target == GETITEM:
        return str(node.args[0].target) in ("aten.max.dim", "aten.min.dim")
    return any(target in table for table in (EXPR, SHAPE_VIEWS, REDUCE_OPS, SCAN_OPS)) or target == FLIP


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
    ranks = {val(r.source).dim() for r in plan.reduces.values()} | {val(n).dim() for n in plan.scans}
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
    dim, rank = arg(node, 1, "dim"), val(node).dim()
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
        plan.cv[node], plan.scope[node], plan.late[node] = False, "global", False
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
        if shape:
            raise Unsupported(f"global output {node.name} of shape {list(shape)}")
        return Output(node, "scalar")
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
