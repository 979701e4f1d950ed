"""Reading a graph for a row top-k: one aten.sort or aten.topk along the last dim of a value computed
row by row from the inputs (elementwise ops and last-dim reductions: a softmax), the window of its
output the graph reads (sort(...)[..., start:end], topk's first k), and the row-wise epilogue on that
window (renormalising weights by their sum, casting ids).

Every value lives in one space: "n" varies along the sorted row, "k" along the window, "row" is one
number per row (a reduction, a [..., 1] input, a 0-d input), "const" a Python number folded here."""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import torch
from torch.fx import Node

from opforge.codegen.exprs import ELEMENTWISE
from opforge.codegen.families.sort.common import IDENTITY, RESHAPES, fold, non_unit, work
from opforge.codegen.lower import Lowered, Unsupported, arg, val

SELECTS = {"aten.sort.stable", "aten.sort.default", "aten.topk.default"}
REDUCES = {"aten.sum.dim_IntList": "sum", "aten.amax.default": "max", "aten.amin.default": "min",
           "aten.mean.dim": "mean"}
WHOLE = 1 << 62  # a slice end torch.export writes for `[:, start:]`
KEY_DTYPES = {torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16, torch.int8,
              torch.uint8}


@dataclass
class Window:
    """The selected part of each sorted row: positions [start, end) (end None: the whole row), and
    topk's k, which torch requires to be at most the row's length."""
    start: int = 0
    end: int | None = None
    topk: int | None = None


@dataclass
class TopkPlan:
    lowered: Lowered
    select: Node
    source: Node  # the sorted value (space "n")
    descending: bool
    window: Window
    rank: int  # rank of the sorted value; rows are its leading dims
    space: dict[Node, str] = field(default_factory=dict)
    consts: dict[Node, object] = field(default_factory=dict)  # folded Python numbers
    picks: dict[Node, str] = field(default_factory=dict)  # window node -> "values" | "indices"
    gathers: dict[Node, Node] = field(default_factory=dict)  # k-space gather -> its n-space source
    loads: dict[Node, str] = field(default_factory=dict)  # placeholder -> "n" | "row" | "scalar"
    before: list[Node] = field(default_factory=list)  # computed before the selection, in order
    after: list[Node] = field(default_factory=list)  # computed from the selection, in order
    outputs: list[Node] = field(default_factory=list)


def analyse(lowered: Lowered) -> TopkPlan:
    nodes = work(lowered)
    selects = [n for n in nodes if str(n.target) in SELECTS]
    if len(selects) != 1:
        raise Unsupported("no sort or topk in the graph" if not selects else f"{len(selects)} sorts in one graph")
    select = selects[0]
    plan = _select(lowered, select)
    _loads(plan)
    for node in nodes:
        if node is not select:
            _place(plan, node)
    depends = {select}
    for node in nodes:
        if node is select:
            continue
        (plan.after if any(a in depends for a in node.all_input_nodes) else plan.before).append(node)
        if node in plan.after:
            depends.add(node)
    plan.before = [n for n in plan.before if n in plan.space and plan.space[n] != "const"]
    plan.after = [n for n in plan.after if n in plan.space and plan.space[n] not in ("const", "sel")]
    _outputs(plan)
    return plan


# --- the selection -----------------------------------------------------------------------------------

def _select(lowered: Lowered, node: Node) -> TopkPlan:
    source = node.args[0]
    if not isinstance(source, Node) or not isinstance(val(source), torch.Tensor):
        raise Unsupported(f"{node.target} of a non-tensor")
    rank, target = val(source).dim(), str(node.target)
    if rank == 0:
        raise Unsupported(f"{target} of a 0-d tensor")
    if val(source).dtype not in KEY_DTYPES:
        raise Unsupported(f"{target} of {val(source).dtype} values")
    if target == "aten.topk.default":
        dim, descending = arg(node, 2, "dim", -1), bool(arg(node, 3, "largest", True))
        if not arg(node, 4, "sorted", True):
            raise Unsupported("topk(sorted=False): torch leaves its order unspecified")
        k = node.args[1]
        if not isinstance(k, int):
            raise Unsupported("topk with a k computed at run time")
        window = Window(0, k, k)
    elif target == "aten.sort.stable":
        dim, descending = node.kwargs.get("dim", -1), bool(node.kwargs.get("descending", False))
        window = Window()
    else:
        dim, descending = arg(node, 1, "dim", -1), bool(arg(node, 2, "descending", False))
        window = Window()
    if dim % rank != rank - 1:
        raise Unsupported(f"{target} along dim {dim} of a {rank}-d tensor: only the last dim is selected by rows")
    plan = TopkPlan(lowered, node, source, descending, window, rank)
    _window(plan)
    if rank == 1 and plan.window.end is None:
        raise Unsupported("a whole sort of a 1-d tensor (a counting sort needs bincount's minlength as the key bound)")
    return plan


def _window(plan: TopkPlan) -> None:
    """Which positions of the sorted row the graph reads: the getitems directly, or slices of them
    along the last dim that all agree."""
    direct, bounds = False, set()
    for item in plan.select.users:
        if item.target is not operator.getitem:
            raise Unsupported(f"{item.target} of the sort's result tuple")
        plan.space[item] = "sel"
        for user in item.users:
            if str(user.target) == "aten.slice.Tensor" and user.args[0] is item:
                bounds.add(_slice_bounds(plan, user))
            else:
                direct = True
    if direct and bounds or len(bounds) > 1:
        raise Unsupported("the sort's outputs read through different windows")
    w = plan.window
    if bounds:  # a slice of topk's k: positions counted from the window's start
        start, end = bounds.pop()
        ends = [e for e in (w.end, None if end is None else w.start + end) if e is not None]
        w.start, w.end = w.start + start, min(ends) if ends else None
    for item in plan.select.users:
        kind = "values" if item.args[1] == 0 else "indices"
        targets = [item] if direct else list(item.users)
        for node in targets:
            plan.picks[node], plan.space[node] = kind, "k"


def _slice_bounds(plan: TopkPlan, node: Node) -> tuple[int, int | None]:
    dim, start, end = arg(node, 1, "dim", 0), arg(node, 2, "start", None), arg(node, 3, "end", None)
    step = arg(node, 4, "step", 1)
    if dim % plan.rank != plan.rank - 1 or step != 1:
        raise Unsupported(f"a slice of the sort along dim {dim} with step {step}: only a window of the row is read")
    start, end = start or 0, (None if end is None or end >= WHOLE else end)
    if start < 0 or end is not None and end < 0:
        raise Unsupported("a slice of the sort counted from the row's end")
    return start, end


# --- where each value lives ----------------------------------------------------------------------------

def _loads(plan: TopkPlan) -> None:
    n = val(plan.source).shape[-1]
    for p in plan.lowered.placeholders:
        node = next(x for x in plan.lowered.graph.nodes if x.op == "placeholder" and x.name == p.name)
        if not node.users:  # an argument the op takes and never reads (SGLang's router takes the hidden states)
            plan.loads[node] = "unused"
            continue
        shape = tuple(val(node).shape)
        if p.kind in ("parameter", "buffer") and shape and shape[-1] != n:
            raise Unsupported(f"{p.kind} {p.fqn} of shape {list(shape)} is not along the sorted row")
        if not shape:
            kind = "scalar"
        elif shape[-1] == n and n != 1:
            kind = "n"
        elif len(shape) == plan.rank and shape[-1] == 1:
            kind = "row"
        else:
            raise Unsupported(f"input {p.name} of shape {list(shape)} is neither along the sorted row nor one per row")
        plan.loads[node], plan.space[node] = kind, ("row" if kind == "scalar" else kind)


def _place(plan: TopkPlan, node: Node) -> None:
    target = str(node.target)
    if node in plan.space:  # the selection's getitems and windows
        return
    if node.target is operator.getitem:
        raise Unsupported(f"getitem of {node.args[0].target}")
    spaces = {plan.space.get(a) for a in node.all_input_nodes}
    if None in spaces:
        raise Unsupported(f"{target} reads a value the sort family does not compute")
    if target == "aten.full.default" or target == "aten.scalar_tensor.default":
        plan.space[node], plan.consts[node] = "const", fold_full(node)
    elif target in REDUCES:
        _reduce(plan, node)
    elif target == "aten.gather.default":
        _gather(plan, node)
    elif target in RESHAPES or target in IDENTITY:
        _view(plan, node)
    elif target in ELEMENTWISE:
        _elementwise(plan, node, spaces)
    else:
        raise Unsupported(f"the sort family cannot handle {target}")


def fold_full(node: Node):
    dtype = val(node).dtype
    return torch.tensor(node.args[1] if str(node.target) == "aten.full.default" else node.args[0]).to(dtype).item()


def _elementwise(plan: TopkPlan, node: Node, spaces: set) -> None:
    if "sel" in spaces:
        raise Unsupported(f"{node.target} of the sort's whole output tuple")
    if {"n", "k"} <= spaces:
        raise Unsupported(f"{node.target} mixes the sorted row with the selected window")
    space = next((s for s in ("n", "k", "row") if s in spaces), "const")
    if space == "const":
        plan.consts[node] = fold(node, [plan.consts.get(a, a) for a in node.args],
                                 {k: plan.consts.get(v, v) for k, v in node.kwargs.items()})
    elif space in ("n", "k"):
        for a in node.all_input_nodes:  # a row value must broadcast along the row, not against its last dim
            if plan.space[a] == "row" and val(a).dim() != val(node).dim() and non_unit(val(a).shape):
                raise Unsupported(f"{node.target} broadcasts {a.name} of shape {list(val(a).shape)} along the row")
    plan.space[node] = space
    _check_shape(plan, node)


def _reduce(plan: TopkPlan, node: Node) -> None:
    source = node.args[0]
    rank = val(source).dim()
    dims = arg(node, 1, "dim", None)
    dims = [dims] if isinstance(dims, int) else list(dims or range(rank))
    if plan.space[source] not in ("n", "k") or rank == 0 or [d % rank for d in dims] != [rank - 1]:
        raise Unsupported(f"{node.target} over dims {dims} of {source.name}: only the last dim of a row is reduced")
    if str(node.target) == "aten.sum.dim_IntList" and node.kwargs.get("dtype") is not None:
        raise Unsupported("a sum with a dtype")
    plan.space[node] = "row"
    _check_shape(plan, node)


def _gather(plan: TopkPlan, node: Node) -> None:
    """scores.gather(-1, ids): an n-space value read at each selected id, picked in the same round."""
    source, dim, index = node.args[:3]
    if plan.space.get(source) != "n" or dim % val(source).dim() != val(source).dim() - 1:
        raise Unsupported("aten.gather of a value that is not along the sorted row")
    while index not in plan.picks and isinstance(index, Node) and str(index.target) in IDENTITY | RESHAPES:
        index = index.args[0]
    if plan.picks.get(index) != "indices" or tuple(val(source).shape) != tuple(val(plan.source).shape):
        raise Unsupported("aten.gather by anything but the selected ids")
    plan.space[node], plan.gathers[node] = "k", source


def _view(plan: TopkPlan, node: Node) -> None:
    source, space = node.args[0], plan.space[node.args[0]]
    if space == "sel":
        raise Unsupported(f"{node.target} of the sort's whole output tuple")
    src, out = tuple(val(source).shape), tuple(val(node).shape)
    if space == "const":
        plan.space[node], plan.consts[node] = "const", plan.consts[source]
        return
    if space == "row" and str(node.target) == "aten.expand.default" and out[-1:] != src[-1:]:
        space = "n"  # one number per row broadcast along it (sum.expand_as(x))
    elif non_unit(src) != non_unit(out):
        raise Unsupported(f"{node.target} reshaping {list(src)} to {list(out)} inside a row top-k")
    elif space in ("n", "k") and out[-1:] != src[-1:]:
        raise Unsupported(f"{node.target} moving the row's last dim ({list(src)} to {list(out)})")
    plan.space[node] = space
    _check_shape(plan, node)


def _check_shape(plan: TopkPlan, node: Node) -> None:
    """n values broadcast to the sorted value's shape; k values are rows x window; row values one per
    row (keepdim or not) or one for all."""
    shape, full = tuple(val(node).shape), tuple(val(plan.source).shape)
    rows, space = full[:-1], plan.space[node]
    if space == "n":
        ok = shape[-1:] == full[-1:] and len(shape) <= len(full) and torch.broadcast_shapes(shape, full) == full
    elif space == "k":
        ok = shape[:-1] == rows
    else:
        ok = not non_unit(shape) or shape in (rows, rows + (1,))
    if not ok:
        raise Unsupported(f"{node.name} ({node.target}) of shape {list(shape)} fits no row of {list(full)}")


def _outputs(plan: TopkPlan) -> None:
    for node in plan.lowered.outputs:
        if not isinstance(node, Node) or node.op == "placeholder":
            raise Unsupported("an output that is an input itself")
        space = plan.space.get(node)
        if space in (None, "const", "sel"):
            raise Unsupported(f"output {getattr(node, 'name', node)} is not computed row by row")
        if space == "n" and tuple(val(node).shape) != tuple(val(plan.source).shape):
            raise Unsupported(f"output {node.name} of shape {list(val(node).shape)} is broadcast, not one per row")
        plan.outputs.append(node)
