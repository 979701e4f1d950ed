"""Cutting a graph into fusion groups, each one kernel of an existing emitter.

The graph's compute nodes (every node but the free ones, subgraph.py) are taken in topological order,
each view of a view just before its first reader, and cut into contiguous runs, so no value leaves a group and
comes back: the groups run in order, each reading the reference's inputs and earlier groups' results
(a value may be read by several later groups). From each start a group grows while
some emitter of the backend accepts it as a whole graph; a rejected extension is not the end (a row
softmax is rejected at amax, sub, exp and sum, then accepted at div), so up to LOOKAHEAD nodes past
the last accepted end are tried. Of the accepted ends, the cut keeps the one that gives the fewest
kernels for the whole graph (a search over starts, each start's outcome memoised), then the fewest
awkward views at the boundaries. A view left for the next group is a view of its input, which the
emitters replay from run-time sizes, where a view at the end of a group (a flatten, a permute)
hands the next one a merged dim it can no longer split. A split of the leading dim is worse still:
the group that computed the merged dim knows its factors (the matmul's rows are `x.shape[0] *
x.shape[1]`), where the next group sees one dim and splits off the leading factor at the export's
size (`[32, t.shape[0] // 32, N]` is wrong for a batch of 2), so it counts twice. Splits of inner
dims (GroupNorm's groups, the heads) replay with the count the reference wrote."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from torch.fx import Node

from opforge.codegen.candidate import Kernel, fused_ops
from opforge.codegen.exprs import VIEWS
from opforge.codegen.lower import Lowered, Unsupported, val
from opforge.codegen.partition.subgraph import FREE_VIEWS, Sub, free_nodes, sub_lowered
from opforge.codegen.views import RESHAPES, groups as regroupings

# Nodes tried past the last accepted end, views not counted: a row softmax is accepted 5 nodes
# after the amax it starts with, a LayerNorm after prims.var 8, GroupNorm after its mean 10.
LOOKAHEAD = 12


@dataclass
class Group:
    """One kernel of the program: its nodes, its graph, the emitter that accepted it and its Kernel."""

    nodes: list[Node]
    sub: Sub
    emitter: str
    kernel: Kernel

    def ops(self) -> str:
        return fused_ops(self.sub.lowered)


# a group's sub-Lowered -> (the accepting emitter's name, its Kernel); Unsupported with every reason
Accept = Callable[[Lowered], tuple[str, Kernel]]


def compute_nodes(lowered: Lowered) -> list[Node]:
    """The nodes a kernel must compute, in graph order but for views, each moved to just before its
    first reader; Unsupported when an output computes nothing."""
    free, used = free_nodes(lowered), lowered.needed()
    for out in lowered.outputs:
        if not isinstance(out, Node) or out in free:
            raise Unsupported(f"an output ({out}) that is an input or a view of one, not computed by a kernel")
    return views_at_readers([n for n in lowered.graph.nodes if n.op == "call_function" and n in used and n not in free])


def views_at_readers(nodes: list[Node]) -> list[Node]:
    """`nodes` (topologically ordered) with each view of a view moved to just before the first node
    that reads it. torch.export writes `q, k, v = qkv.chunk(3, -1)` and the heads' views of all three
    before the first matmul of q and k: in that order the cut would put v's views in the scores'
    group, where they are one more output no emitter writes; at their reader they join the second
    matmul's group, which reads them as views of the qkv group's output (one value read by two later
    groups). A view of a computation stays where export wrote it, after it: it may end that group
    (the rows of a Linear split back into [B, T], which only the matmul's group can replay)."""
    members, placed, order = set(nodes), set(), []

    def is_view(node: Node) -> bool:
        return node in members and str(node.target) in FREE_VIEWS

    moved = {n for n in nodes if is_view(n) and any(is_view(a) for a in n.all_input_nodes)}

    def place(node: Node) -> None:
        if node in placed:
            return
        placed.add(node)
        for arg in node.all_input_nodes:
            if arg in moved:
                place(arg)
        order.append(node)

    for node in nodes:
        if node not in moved:
            place(node)
    for node in nodes:  # views no computation reads: the graph's outputs
        place(node)
    return order


def _splits_leading_dim(node: Node) -> bool:
    """Whether `node` is a reshape that splits its input's first non-1 dim into several."""
    if str(node.target) not in RESHAPES:
        return False
    try:
        pairs = regroupings(tuple(val(node.args[0]).shape), tuple(val(node).shape))
    except Unsupported:
        return False
    return bool(pairs) and len(pairs[0][0]) == 1 and len(pairs[0][1]) > 1


def awkward_views(group: Group) -> int:
    """The group's views at its boundaries that replay badly (the module docstring): one for ending in
    a view, two for each split of the leading dim of a value an earlier group computed."""
    computed = {n for n in group.sub.inputs if n.op != "placeholder"}
    splits = sum(_splits_leading_dim(n) and n.args[0] in computed for n in group.nodes)
    return (str(group.nodes[-1].target) in VIEWS) + 2 * splits


class _Search:
    def __init__(self, lowered: Lowered, accept: Accept, lookahead: int) -> None:
        self.lowered, self.accept, self.lookahead = lowered, accept, lookahead
        self.nodes, self.free = compute_nodes(lowered), free_nodes(lowered)
        self.best: dict[int, tuple | None] = {}  # start -> (score, groups) or None when nothing fits
        self.dead: dict[int, str] = {}  # start -> why no group starting there is accepted

    def solve(self, start: int) -> tuple | None:
        """(score, groups) of the best cut of nodes[start:]; score = (kernels, awkward views)."""
        if start == len(self.nodes):
            return (0, 0), []
        if start not in self.best:
            self.best[start] = None  # contiguous runs only move forward: no cycle reaches back here
            options = []
            for group in self._accepted(start):
                rest = self.solve(start + len(group.nodes))
                if rest is not None:
                    options.append(((rest[0][0] + 1, rest[0][1] + awkward_views(group)), [group] + rest[1]))
            self.best[start] = min(options, key=lambda o: o[0]) if options else None
        return self.best[start]

    def _accepted(self, start: int) -> list[Group]:
        """Every accepted group from `start`, longest first."""
        found, end, misses, first = [], start, 0, ""
        while end < len(self.nodes) and misses <= self.lookahead:
            nodes = self.nodes[start:end + 1]
            try:
                sub = sub_lowered(self.lowered, nodes, self.free)
                found.append(Group(nodes, sub, *self.accept(sub.lowered)))
                misses = 0
            except Unsupported as exc:
                first = first or str(exc)  # why the first node alone is rejected says most
                misses += str(nodes[-1].target) not in FREE_VIEWS  # a head split's views are 5 nodes
            end += 1
        if not found:
            self.dead[start] = first
        return found[::-1]


def cut(lowered: Lowered, accept: Accept, lookahead: int = LOOKAHEAD) -> list[Group]:
    """The groups in order; Unsupported naming the furthest node from which no group is accepted."""
    search = _Search(lowered, accept, lookahead)
    solved = search.solve(0)
    if solved is not None:
        return solved[1]
    stuck = max(search.dead)  # the furthest start any cut reached: where the graph stops fitting
    node = search.nodes[stuck]
    op = str(node.target).replace("aten.", "").replace(".default", "")
    raise Unsupported(f"no emitter takes the group starting at {node.name} (ATen op {op}, with up to "
                      f"{lookahead} nodes after it): {search.dead[stuck]}")
