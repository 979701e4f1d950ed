"""Reading a graph for a counting sort: integer keys flattened from one input (token x top-k expert ids),
a bincount of them whose minlength bounds the keys (the expert count), a stable ascending sort of the
same keys (the slots permuted by expert id), and what the graph computes from the counts: a cumsum,
elementwise ops, and the counts' scan shifted by one into a zero-headed [E + 1] tensor (offsets).

Spaces: "key" (the flat keys in input order: views and widening casts only), "slot" (one value per
key in sorted order: the sort's indices and values, and elementwise ops of them), "bin" ([E], one per
key value), "bin1" ([E + 1]: a constant head, then a bin value: `offsets[1:] = cumsum`, `cat`,
`pad`), "const" (a Python number)."""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

import torch
from torch.fx import Node

from opforge.codegen.exprs import ELEMENTWISE
from opforge.codegen.families.sort.common import IDENTITY, RESHAPES, fold, work
from opforge.codegen.lower import Lowered, Unsupported, arg, val

INTS = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)
WHOLE = 1 << 62
CASTS = {"aten._to_copy.default", "prims.convert_element_type.default"}
KEY_VIEWS = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.unsqueeze.default",
             "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default"} | IDENTITY


@dataclass
class CountingPlan:
    lowered: Lowered
    source: Node | None = None  # the placeholder the keys are read from
    bins: int = 0  # E: bincount's minlength, the keys' bound
    counts: Node | None = None  # the bincount
    sort: Node | None = None
    space: dict[Node, str] = field(default_factory=dict)
    consts: dict[Node, object] = field(default_factory=dict)
    heads: dict[Node, object] = field(default_factory=dict)  # bin1 values: position 0
    tails: dict[Node, Node] = field(default_factory=dict)  # a shifted bin1 value: the bin value after its head
    picks: dict[Node, str] = field(default_factory=dict)  # the sort's getitems: "values" | "indices"
    slot_nodes: list[Node] = field(default_factory=list)
    bin_nodes: list[Node] = field(default_factory=list)
    outputs: list[Node] = field(default_factory=list)


def analyse(lowered: Lowered) -> CountingPlan:
    plan = CountingPlan(lowered)
    inputs = [n for n in lowered.graph.nodes if n.op == "placeholder"]
    if len(inputs) != 1 or val(inputs[0]).dtype not in INTS:
        raise Unsupported("a counting sort reads one integer tensor of keys")
    plan.source = inputs[0]
    plan.space[plan.source] = "key"
    for node in work(lowered):
        _place(plan, node)
    if plan.counts is None:
        raise Unsupported("no bincount bounding the keys")
    for node in plan.lowered.outputs:
        space = plan.space.get(node) if isinstance(node, Node) else None
        if space not in ("slot", "bin", "bin1"):
            raise Unsupported(f"output {getattr(node, 'name', node)} is neither sorted slots nor per-key counts")
        plan.outputs.append(node)
    return plan


def _place(plan: CountingPlan, node: Node) -> None:
    target = str(node.target)
    if node.target is operator.getitem:
        return _getitem(plan, node)
    spaces = [plan.space.get(a) for a in node.all_input_nodes]
    if None in spaces:
        raise Unsupported(f"{target} reads a value the counting sort does not compute")
    if target == "aten.bincount.default":
        return _bincount(plan, node)
    if target in ("aten.sort.stable", "aten.sort.default"):
        return _sort(plan, node)
    if target == "aten.full.default":
        plan.space[node], plan.consts[node] = "const", torch.tensor(node.args[1]).to(val(node).dtype).item()
        return
    if target == "aten.cumsum.default":
        if spaces != ["bin"] or arg(node, 1, "dim") not in (0, -1) or node.kwargs.get("dtype") not in (
                None, torch.int64):
            raise Unsupported("a cumsum of anything but the counts")
        plan.space[node] = "bin"
        plan.bin_nodes.append(node)
        return
    if target in ("aten.slice_scatter.default", "aten.cat.default", "aten.constant_pad_nd.default"):
        return _shifted(plan, node)
    if target == "aten.slice.Tensor" and spaces == ["const"]:
        plan.space[node], plan.consts[node] = "const", plan.consts[node.args[0]]
        return
    if target == "aten.copy.default":
        return _copy(plan, node)
    if target in KEY_VIEWS or target in RESHAPES or target in CASTS and "key" in spaces:
        return _view(plan, node, spaces[0])
    if target in ELEMENTWISE:
        return _elementwise(plan, node, set(spaces))
    raise Unsupported(f"the counting sort cannot handle {target}")


def _view(plan: CountingPlan, node: Node, space: str) -> None:
    source, target = node.args[0], str(node.target)
    src, out = _static(source), _static(node)
    if space == "key":
        if target in CASTS:
            if val(node).dtype not in INTS or torch.iinfo(val(node).dtype).bits < torch.iinfo(val(source).dtype).bits:
                raise Unsupported(f"a cast of the keys to {val(node).dtype}")
        elif target not in KEY_VIEWS:
            raise Unsupported(f"{target} of the keys")
    elif space == "const":
        plan.space[node], plan.consts[node] = "const", plan.consts[source]
        return
    elif src != out and not (space == "bin" and _fits(node, (plan.bins,)) and len(src) == 1):
        raise Unsupported(f"{target} of {list(src)} to {list(out)} in the counting sort")
    plan.space[node] = space
    if space in ("bin", "bin1"):
        if space == "bin1":
            plan.heads[node] = plan.heads[source]
        plan.bin_nodes.append(node)
    elif space == "slot":
        plan.slot_nodes.append(node)


def _bincount(plan: CountingPlan, node: Node) -> None:
    keys, weights, minlength = node.args[0], arg(node, 1, "weights"), arg(node, 2, "minlength", 0)
    if plan.counts is not None:
        raise Unsupported("two bincounts in one graph")
    if plan.space.get(keys) != "key" or val(keys).dim() != 1:
        raise Unsupported("a bincount of anything but the flat keys")
    if weights is not None:
        raise Unsupported("a weighted bincount")
    if not isinstance(minlength, int) or minlength <= 0:
        raise Unsupported("a bincount without minlength: the keys have no bound")
    if not _fits(node, (minlength,)):
        raise Unsupported(f"a bincount of {list(val(node).shape)} bins for minlength {minlength}")
    plan.counts, plan.bins, plan.space[node] = node, minlength, "bin"
    plan.bin_nodes.append(node)


def _sort(plan: CountingPlan, node: Node) -> None:
    keys = node.args[0]
    if plan.sort is not None:
        raise Unsupported("two sorts in one graph")
    if plan.space.get(keys) != "key" or val(keys).dim() != 1:
        raise Unsupported("a sort of anything but the flat keys")
    stable = str(node.target) == "aten.sort.stable" and node.kwargs.get("stable")
    descending = node.kwargs.get("descending") if stable else arg(node, 2, "descending", False)
    if not stable:
        raise Unsupported("an unstable sort of integer keys: torch leaves the order of equal keys unspecified")
    if descending:
        raise Unsupported("a descending counting sort")
    plan.sort, plan.space[node] = node, "sorted"


def _getitem(plan: CountingPlan, node: Node) -> None:
    if node.args[0] is not plan.sort or plan.sort is None:
        raise Unsupported(f"getitem of {node.args[0].target}")
    plan.picks[node] = "values" if node.args[1] == 0 else "indices"
    plan.space[node] = "slot"


def _elementwise(plan: CountingPlan, node: Node, spaces: set) -> None:
    spaces.discard("const")
    if not spaces:
        plan.space[node] = "const"
        plan.consts[node] = fold(node, [plan.consts.get(a, a) for a in node.args],
                                 {k: plan.consts.get(v, v) for k, v in node.kwargs.items()})
        return
    if len(spaces) > 1 or spaces & {"key", "sorted"}:
        raise Unsupported(f"{node.target} mixes {' and '.join(sorted(spaces))} values")
    space = spaces.pop()
    plan.space[node] = space
    if space == "bin1":
        plan.heads[node] = fold(node, [plan.heads.get(a, plan.consts.get(a, a)) for a in node.args],
                                {k: plan.consts.get(v, v) for k, v in node.kwargs.items()})
    (plan.slot_nodes if space == "slot" else plan.bin_nodes).append(node)
    expected = {"slot": None, "bin": (plan.bins,), "bin1": (plan.bins + 1,)}[space]
    if expected and not _fits(node, expected):
        raise Unsupported(f"{node.name} of shape {list(val(node).shape)} among per-key values")


def _copy(plan: CountingPlan, node: Node) -> None:
    """`dst.copy_(src)` as functionalised `offsets[1:] = cumsum`: the result is src, broadcast to dst."""
    dst, src = node.args[:2]
    if plan.space[dst] != "const" or plan.space[src] != "bin" or not _fits(node, (plan.bins,)):
        raise Unsupported("aten.copy of anything but per-key values into a constant tensor")
    plan.space[node] = "bin"
    plan.bin_nodes.append(node)


def _shifted(plan: CountingPlan, node: Node) -> None:
    """A constant, then a bin value: an [E + 1] tensor of exclusive offsets."""
    target, e = str(node.target), plan.bins
    if target == "aten.slice_scatter.default":
        base, src = node.args[:2]
        dim, start, end, step = (arg(node, 2, "dim", 0), arg(node, 3, "start", None), arg(node, 4, "end", None),
                                 arg(node, 5, "step", 1))
        fits = (plan.space.get(base) == "const" and dim in (0, -1) and start == 1 and step == 1
                and (end is None or end >= e + 1))
        head, tail = plan.consts.get(base), src
    elif target == "aten.cat.default":
        parts, dim = node.args[0], arg(node, 1, "dim", 0)
        fits = (len(parts) == 2 and dim in (0, -1) and plan.space.get(parts[0]) == "const"
                and tuple(val(parts[0]).shape) == (1,))
        head, tail = plan.consts.get(parts[0]), parts[-1]
    else:
        tail, pad, head = node.args[0], list(node.args[1]), arg(node, 2, "value", 0)
        fits = pad == [1, 0]
    if not fits or plan.space.get(tail) != "bin" or not _fits(node, (e + 1,)):
        raise Unsupported(f"{target} that is not a constant followed by the per-key values")
    plan.space[node], plan.heads[node] = "bin1", torch.tensor(head).to(val(node).dtype).item()
    plan.tails[node] = tail
    plan.bin_nodes.append(node)


def _static(node: Node) -> tuple:
    """The node's shape, a size torch.export could not know (bincount's length: at least minlength,
    more for a larger key) as None."""
    return tuple(d if isinstance(d, int) else None for d in val(node).shape)


def _fits(node: Node, expected: tuple[int, ...]) -> bool:
    """Whether the node has the shape `expected`, a data-dependent size standing for its own: the keys
    are checked below minlength at run time, where torch.bincount's length is minlength."""
    shape = _static(node)
    return len(shape) == len(expected) and all(d is None or d == e for d, e in zip(shape, expected))
