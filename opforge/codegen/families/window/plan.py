"""The window family: max and average pooling over 1, 2 or 3 spatial dims, read from the graph as
one pooling node (its hyperparameters normalised to three spatial dims), the input's size-1 views,
a one-input elementwise prologue and the nodes after the pool (the emitter fuses them)."""
from __future__ import annotations

from torch.fx import Node

from opforge.codegen.exprs import ELEMENTWISE
from opforge.codegen.lower import Lowered, Unsupported, arg, val

POOLS = {  # target -> (kind, spatial rank)
    "aten.max_pool2d_with_indices.default": ("max", 2), "aten.max_pool3d_with_indices.default": ("max", 3),
    "aten.avg_pool2d.default": ("avg", 2), "aten.avg_pool3d.default": ("avg", 3),
}
SIZE_VIEWS = {"aten.unsqueeze.default": "unsqueeze", "aten.squeeze.dims": "squeeze", "aten.squeeze.dim": "squeeze"}
IDENTITY = {"aten.clone.default", "aten.alias.default", "aten.detach.default", "aten.contiguous.default"}


class Pool:
    """The pooling node's arguments, normalised to three spatial dims (a 2-D pool has depth 1)."""

    def __init__(self, node: Node) -> None:
        self.kind, rank = POOLS[str(node.target)]

        def triple(value, default, depth: int) -> tuple[int, ...]:
            """Per spatial dim as (depth, height, width); a 2-D pool's depth is `depth`."""
            value = default if value in (None, []) else value
            value = [value] * rank if isinstance(value, int) else list(value)
            value = value * rank if len(value) == 1 else value
            if len(value) != rank:
                raise Unsupported(f"{node.target} with {value}")
            return (depth,) * (3 - rank) + tuple(int(v) for v in value)

        self.kernel = triple(arg(node, 1, "kernel_size"), None, 1)
        self.stride = triple(arg(node, 2, "stride"), list(self.kernel[3 - rank:]), 1)
        self.padding = triple(arg(node, 3, "padding", 0), 0, 0)
        if self.kind == "max":  # (x, kernel, stride, padding, dilation, ceil_mode)
            self.dilation = triple(arg(node, 4, "dilation", 1), 1, 1)
            self.ceil_mode = bool(arg(node, 5, "ceil_mode", False))
            self.count_include_pad, self.divisor = True, None
        else:  # (x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
            self.dilation = (1, 1, 1)
            self.ceil_mode = bool(arg(node, 4, "ceil_mode", False))
            self.count_include_pad = bool(arg(node, 5, "count_include_pad", True))
            self.divisor = arg(node, 6, "divisor_override")
        self.rank = rank


def chain(lowered: Lowered) -> tuple[Node, list[Node], list[Node], Node, list[Node]]:
    """(placeholder, its size-1 views, the elementwise prologue, the pool, the nodes after it)."""
    nodes = [n for n in lowered.graph.nodes if n.op == "call_function"]
    pools = [n for n in nodes if str(n.target) in POOLS]
    if not pools:
        raise Unsupported("no pooling op in the graph")
    if len(pools) > 1:
        raise Unsupported(f"{len(pools)} pooling ops; the kernel fuses one")
    pool = pools[0]
    before, prologue, x = [], [], pool.args[0]
    while isinstance(x, Node) and x.op == "call_function":
        target = str(x.target)
        inputs = [a for a in list(x.args) + list(x.kwargs.values()) if isinstance(a, Node)]
        if target in SIZE_VIEWS.keys() | IDENTITY:
            before.insert(0, x)
        elif target in ELEMENTWISE and len(inputs) == 1 and inputs[0] is x.args[0]:
            prologue.insert(0, x)  # elementwise on each loaded element (LPPool's x ** p)
        else:
            raise Unsupported(f"a pooling input computed by {target} (views and one-input elementwise "
                              "ops are fused)")
        x = x.args[0]
    if not (isinstance(x, Node) and x.op == "placeholder"):
        raise Unsupported(f"a pooling input computed by {getattr(x, 'target', x)}")
    after = [n for n in nodes if n not in before and n not in prologue and n is not pool]
    if len(lowered.outputs) != 1 or not isinstance(lowered.outputs[0], Node):
        raise Unsupported("a pooling graph with several outputs")
    return x, before, prologue, pool, after


def pool_of(lowered: Lowered) -> tuple[Node, list[Node], list[Node], Node, list[Node], Pool]:
    """chain()'s parts and the Pool; Unsupported for an unbatched pool."""
    x, before, prologue, pool_node, after = chain(lowered)
    pool = Pool(pool_node)
    pooled_rank = val(pool_node.args[0]).dim()
    if pooled_rank != pool.rank + 2:
        raise Unsupported(f"an unbatched {pool.rank}-D pool (input of rank {pooled_rank})")
    return x, before, prologue, pool_node, after, pool
