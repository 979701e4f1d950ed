"""The row-wise family's plan, as data: which dims are reduced, each reduction normalised, where
each value lives and what each output is. families/rowwise/plan.py fills it in (analyse); each
backend's emitter reads it.

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

from opforge.codegen.exprs import VIEWS, Var
from opforge.codegen.lower import Lowered, Unsupported, val

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
SCAN_OPS = {"aten.cumsum.default": "cumsum", "aten.cumprod.default": "cumprod",
            "aten.cummax.default": "cummax", "aten.cummin.default": "cummin",  # (values, indices)
            "aten.logcumsumexp.default": "logcumsumexp"}
PAIRED = {"aten.max.dim", "aten.min.dim", "aten.cummax.default", "aten.cummin.default"}  # read through getitem
FLIP, GETITEM = "aten.flip.default", "<built-in function getitem>"
# target -> index of the value (full_like's tensor argument gives only the shape: zeros_like(x) in a where)
CONSTANTS = {"aten.scalar_tensor.default": 0, "aten.full.default": 1, "aten.full_like.default": 1}
# Views that only add, drop or broadcast size-1 dims are the identity in the row layout.
SHAPE_VIEWS = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.expand.default",
               "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default",
               "prims.broadcast_in_dim.default"} & VIEWS
DIVISIONS = {"aten.div.Tensor", "aten.div.Scalar", "prims.div.default"}
ALIASES = {"aten.clone.default", "aten.alias.default", "aten.detach.default", "aten.lift_fresh_copy.default"}
# Full reductions combine per-row partials; these kinds combine exactly (mean: sums, divided once;
# var/std: each row's mean and squared deviations, combined by Chan's formula).
FULL_KINDS = {"sum", "mean", "max", "min", "prod", "any", "all", "var", "std"}
# A full reduction's per-row partials and how they combine (a mean's partials are sums).
COMBINE = {"sum": "sum", "mean": "sum", "max": "max", "min": "min", "prod": "prod", "any": "any", "all": "all",
           "var": "var", "std": "var"}
MOMENTS = {"var", "std"}  # full reductions whose per-row partials are two: the row's mean and M2


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
    after: dict[Node, bool] = field(default_factory=dict)  # depends on a reduction's result
    # Divisions and reciprocals whose quotient is quantised next (rounded, or cast to an integer or
    # an 8-bit float): an emitter computes them as IEEE does, since one ulp moves q by one at a tie.
    exact: set[Node] = field(default_factory=set)

    def is_leaf(self, node: Node) -> bool:
        """A tensor the kernels load: an input, or an input's regrouping view the launcher rebuilds."""
        return node.op == "placeholder" and node not in self.consumed or node in self.leaves

    def counts(self) -> dict[str, int]:
        """Export-time counts that literals in the graph may stand for (a mean's divisor, batchmean)."""
        cols = math.prod(self.full_shape[d] for d in self.dims)
        numel = math.prod(self.full_shape)
        return {"n_cols": cols, "numel": numel, "size0": self.full_shape[0], "n_rows": numel // max(cols, 1)}


def literal_size(plan: Plan, node: Node, index: int, value, order: tuple[str, ...], used: set[str]):
    """A divisor torch.export baked from the export shape (a mean's N, batchmean's batch) becomes the
    runtime count it stands for; any other literal is left alone."""
    if (str(node.target) not in DIVISIONS or index != 1 or isinstance(value, bool)
            or not isinstance(value, (int, float)) or value != int(value) or value <= 1):
        return value
    reduced = node.args[0]
    if not (isinstance(reduced, Node) and (reduced in plan.reduces or plan.after.get(reduced))):
        return value
    counts = plan.counts()
    for name in order:
        if counts[name] == value:
            used.add(name)
            return Var(name)
    return value


def constant(node: Node):
    value = node.args[CONSTANTS[str(node.target)]]
    dtype = val(node).dtype
    return float(value) if dtype.is_floating_point else bool(value) if dtype == torch.bool else value


def node_args(plan: Plan, node: Node, arg, order: tuple[str, ...], used: set[str]) -> list:
    """An elementwise node's arguments for an emitter's formatter: `arg(input)` for each input node,
    literals as they are (a baked size as the count it stands for, see literal_size)."""
    args = []
    for i, a in enumerate(node.args):
        if isinstance(a, Node):
            args.append(arg(a))
        elif isinstance(a, (list, tuple)):
            raise Unsupported(f"{node.target} with a list argument")
        else:
            args.append(literal_size(plan, node, i, a, order, used))
    return args


def acc_dtype(kind: str, source: Node, node: Node) -> torch.dtype:
    """fp32 for float math (fp64 stays fp64), int64 for integer sums, int32 flags for any/all."""
    if kind in ("any", "all"):
        return torch.int32
    ref = val(source).dtype if kind in ("max", "min", "argmax", "argmin") else _value_dtype(node)
    if ref == torch.float64:
        return torch.float64
    if ref.is_floating_point:
        return torch.float32
    return torch.int32 if ref == torch.bool else torch.int64


def rank_of(node: Node) -> int:
    """A value's rank; a (values, indices) pair's (max.dim, cummax) is its values' rank."""
    v = val(node)
    return v.dim() if isinstance(v, torch.Tensor) else v[0].dim()


def _value_dtype(node: Node) -> torch.dtype:
    v = val(node)
    return v[0].dtype if isinstance(v, (tuple, list)) else v.dtype
