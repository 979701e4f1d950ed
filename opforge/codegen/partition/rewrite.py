"""A rewrite that gives the cut fewer kernels: a unary elementwise op after a view of a computed
value moves before the view. `relu(flatten(groupnorm))` becomes `flatten(relu(groupnorm))`, so the
ReLU fuses into the GroupNorm kernel's epilogue instead of starting a kernel of its own. The two are
equal for any view (a view only re-indexes values); only ops whose other arguments are Python
numbers move, since a tensor operand would have to be viewed too. The partitioner cuts both graphs
and keeps the one with fewer kernels. The reference's graph is copied,
not changed: the lowering is cached and shared."""
from __future__ import annotations

import torch
from torch.fx import Graph, Node

from opforge.codegen.exprs import ELEMENTWISE
from opforge.codegen.lower import Lowered, val
from opforge.codegen.partition.subgraph import free_nodes
from opforge.codegen.views import PERMUTES, RESHAPES

# Views that regroup or reorder a value (a norm's flatten back, a head split): a broadcast or a
# slice stays where it is (a reduction's broadcast result is the row-wise plan's own pattern).
MOVED_PAST = RESHAPES | PERMUTES | {"aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims"}


def sink_unary_past_views(lowered: Lowered) -> Lowered:
    """A copy of `lowered` with every movable unary op moved before the view it reads."""
    graph, env = Graph(), {}
    for node in lowered.graph.nodes:
        env[node] = graph.node_copy(node, lambda n: env[n])
    outputs = [env[o] if isinstance(o, Node) else o for o in lowered.outputs]
    copy = Lowered(graph, lowered.placeholders, outputs, lowered.n_forward_args, set(lowered.ops))
    while _sink_one(copy):
        pass
    return copy


def _movable(op: Node, free: set[Node]) -> Node | None:
    """The view `op` reads, when `op` can move before it."""
    inputs = op.all_input_nodes
    if op.op != "call_function" or str(op.target) not in ELEMENTWISE or len(inputs) != 1 or op.kwargs:
        return None
    view = inputs[0]
    if view.op != "call_function" or str(view.target) not in MOVED_PAST or view in free or len(view.users) != 1:
        return None
    if sum(a is view for a in op.args) != 1 or not isinstance(val(view.args[0]), torch.Tensor):
        return None
    return view


def _sink_one(lowered: Lowered) -> bool:
    free = free_nodes(lowered)
    for op in lowered.graph.nodes:
        view = _movable(op, free)
        if view is None:
            continue
        source, graph = view.args[0], lowered.graph
        with graph.inserting_before(view):
            moved = graph.call_function(op.target, tuple(source if a is view else a for a in op.args))
            moved.meta = {**op.meta, "val": _like(val(source), val(op).dtype)}
            viewed = graph.call_function(view.target, (moved, *view.args[1:]), dict(view.kwargs))
            viewed.meta = dict(op.meta)
        op.replace_all_uses_with(viewed)
        lowered.outputs = [viewed if o is op else o for o in lowered.outputs]
        graph.erase_node(op)
        graph.erase_node(view)
        return True
    return False


def _like(tensor: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A tensor of `tensor`'s shape and `dtype`, in the same fake mode as the graph's values."""
    mode = getattr(tensor, "fake_mode", None)
    if mode is None:
        return torch.empty(tuple(tensor.shape), dtype=dtype, device="meta")
    with mode:
        return torch.empty(tuple(tensor.shape), dtype=dtype, device=tensor.device)
