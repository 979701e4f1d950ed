"""Index writes: `target[i0, :, i1] = values` as torch.export records them, one aten.index_put per
write (index_copy_ lowers to one too: `[None, index]`), its result the new value of a forward argument
the reference updates in place (Lowered.mutations). The candidate writes into that argument itself.

Every write is read over *rows*: the elements of its index tensors. A boolean keep mask in front
(`keep = slots >= 0; cache[slots[keep]] = key[keep]`) compacts the kept rows, a size only known at
run time; the plan reads it uncompacted instead: row r of `x[keep]` is row r of `x` where keep[r]
holds, so the kernel runs over the mask's shape and skips the rows it drops. Each write is then

    for every row r (the mask's or the index tensors' broadcast shape) where keep[r]:
        target[index_0[r], ..., index_k[r] at the indexed dims, e at the others] = value[r, e]

with the index tensors and the mask elementwise chains of row-shaped loads (`rows`), and the value an
elementwise chain of loads viewed [rows..., rest...] (`rest`: the target's dims no index addresses).
Writes that share the mask and write distinct arguments share one kernel (key and value caches)."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch.fx import Node

from opforge.codegen.exprs import ELEMENTWISE, Var
from opforge.codegen.families.pointwise.plan import LEAF_VIEWS, Op
from opforge.codegen.lower import Lowered, Unsupported, arg, val
from opforge.codegen.views import INDEXING, PERMUTES, RESHAPES, leaf_replay

WRITES = {"aten.index_put.default", "aten.index_put_.default"}
SCATTERS = {"aten.scatter.src", "aten.scatter.value"}  # scatter_(dim, index, src or a number)
REDUCING = {"aten.scatter.reduce", "aten.scatter.value_reduce", "aten.scatter_add.default",
            "aten.scatter_reduce.two", "aten.index_reduce.default"}
COMPACT = "aten.index.Tensor"  # x[mask] with one boolean index: the rows the mask keeps
IDENTITY = {"aten.clone.default", "aten.alias.default", "aten.detach.default", "aten.contiguous.default",
            "aten.lift_fresh_copy.default"}
ROW_RANK, REST_RANK = 4, 5  # dims of the rows and of the rest the kernels decompose


@dataclass(frozen=True)
class Leaf:
    """A value the kernel loads: the graph node, and the launcher's torch code building it from the
    forward arguments (views only). `compacted`: it is read through the mask (`x[keep]`)."""

    node: Node
    code: str
    compacted: bool
    var: Var

    @property
    def dtype(self) -> torch.dtype:
        return val(self.node).dtype


@dataclass
class Side:
    """Loads and elementwise ops of one side of a kernel (per row, or per row and rest element)."""

    prefix: str = ""  # of its values' names: a write's own values never meet another write's
    leaves: list[Leaf] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    names: dict[Node, Var] = field(default_factory=dict)


@dataclass
class Write:
    """One index_put: the forward argument it writes, which dims its index tensors address (the
    rest in order), whether those are consecutive (torch then keeps the rows where they stand in the
    value's dims, else puts them first), the index values per addressed dim, and the value."""

    node: Node
    target: str
    rank: int
    dims: tuple[int, ...]
    adjacent: bool
    index: list[Var]
    values: Side
    value: object  # a Var, or a Python number for a constant fill
    along: int | None = None  # a scatter's dim: every dim indexed, the others by the row's own coordinate

    @property
    def rest(self) -> tuple[int, ...]:
        return tuple(d for d in range(self.rank) if d not in self.dims)


@dataclass
class Group:
    """Writes over the same rows, one kernel: the shared row side, the mask's rank (0: none; the
    rows are then the index tensors' broadcast shape, of `rows_rank` dims) and its value."""

    rows: Side
    mask: Node | None
    rows_rank: int
    key: object = None  # what makes the rows the same: the mask, else the index tensors
    keep: Var | None = None
    writes: list[Write] = field(default_factory=list)


class Plan:
    """Every write of the graph, grouped into kernels in graph order."""

    def __init__(self, lowered: Lowered) -> None:
        self.lowered = lowered
        writes = [n for n in lowered.graph.nodes if str(n.target) in WRITES | SCATTERS]
        reducing = sorted({str(n.target) for n in lowered.graph.nodes if str(n.target) in REDUCING})
        if reducing:
            raise Unsupported(f"{', '.join(reducing)}: a scatter that reduces into the target (scatter-add), "
                              "which needs atomics, rather than writes")
        if not writes:
            raise Unsupported("no index write (aten.index_put, aten.scatter) in the graph")
        # torch.export's checks of a data-dependent size (sym_size, _assert_scalar) are never read:
        # the plan walks back from the writes only.
        if lowered.outputs:
            raise Unsupported("an index write whose graph also returns values")
        self.targets = _targets(lowered, writes)
        self.groups: list[Group] = []
        for node in writes:
            self._add(node)

    def _add(self, node: Node) -> None:
        if str(node.target) in SCATTERS:
            return self._add_scatter(node)
        if arg(node, 3, "accumulate", False):
            raise Unsupported("index_put with accumulate=True (a scatter-add)")
        indices = list(node.args[1])
        dims = tuple(d for d, i in enumerate(indices) if i is not None)
        for i in indices:
            if i is not None and (val(i).dtype == torch.bool or val(i).dtype.is_floating_point):
                raise Unsupported(f"index_put with a {val(i).dtype} index tensor (a masked fill)")
        mask = _mask(node)
        group = self.groups[-1] if self.groups else None
        target = self.targets[node]
        # the same rows: the same mask, or unmasked the same index tensors
        rows = mask if mask is not None else tuple(indices[d] for d in dims)
        if not (group and group.key == rows and target not in {w.target for w in group.writes}):
            rank = val(mask).dim() if mask is not None else max(val(indices[d]).dim() for d in dims)
            if rank > ROW_RANK:
                raise Unsupported(f"index rows of {rank} dims (the kernel decomposes up to {ROW_RANK})")
            group = Group(Side(), mask, rank, key=rows)
            self.groups.append(group)
            if mask is not None:
                group.keep = _Trace(group.rows, mask, "rows").value(mask)
        adjacent = dims == tuple(range(dims[0], dims[-1] + 1))
        if mask is not None and adjacent and dims[0] > 0:
            raise Unsupported("a masked index_put whose index tensors follow a sliced dim")
        rank = len(val(node).shape)
        if rank - len(dims) > REST_RANK:
            raise Unsupported(f"an index write of {rank - len(dims)} unindexed dims (up to {REST_RANK})")
        rows = _Trace(group.rows, mask, "rows")
        index = [rows.value(indices[d]) for d in dims]
        values = Side(prefix=f"w{len(group.writes)}_")
        value = _Trace(values, mask, "values").value(node.args[2])
        if val(node.args[2]).dtype != val(node).dtype:
            raise Unsupported("an index write whose values have another dtype than the target")
        group.writes.append(Write(node, target, rank, dims, adjacent, index, values, value))

    def _add_scatter(self, node: Node) -> None:
        """target.scatter_(dim, index, src): rows are the index's elements; row r = (r_0, .., r_k)
        writes target[r_0, .., index[r], .., r_k] = src[r]."""
        if node.kwargs.get("reduce") is not None:
            raise Unsupported(f"scatter with reduce={node.kwargs['reduce']!r}")
        rank = len(val(node).shape)
        along, index, src = node.args[1] % max(rank, 1), node.args[2], node.args[3]
        if val(index).dim() != rank or rank > ROW_RANK:
            raise Unsupported(f"a scatter of {rank} dims (the kernel decomposes up to {ROW_RANK})")
        group = self.groups[-1] if self.groups else None
        target = self.targets[node]
        if not (group and group.key == ("scatter", index) and target not in {w.target for w in group.writes}):
            group = Group(Side(), None, rank, key=("scatter", index))
            self.groups.append(group)
        own = _Trace(group.rows, None, "rows").value(index)
        coords = [Var(f"r{ROW_RANK - rank + d}") for d in range(rank)]
        values = Side(prefix=f"w{len(group.writes)}_")
        value = _Trace(values, None, "values").value(src)
        if isinstance(src, Node) and val(src).dtype != val(node).dtype:
            raise Unsupported("a scatter whose source has another dtype than the target")
        group.writes.append(Write(node, target, rank, tuple(range(rank)), True,
                                  coords[:along] + [own] + coords[along + 1:], values, value, along))


def _targets(lowered: Lowered, writes: list[Node]) -> dict[Node, str]:
    """Each write's forward argument: a mutated placeholder, or an earlier write into it (a chain),
    whose last write is the argument's value after forward and is read by nothing else."""
    out: dict[Node, str] = {}
    final = {node: name for name, node in lowered.mutations.items()}
    for node in writes:
        base = node.args[0]
        if isinstance(base, Node) and base in out:
            out[node] = out[base]
        elif isinstance(base, Node) and base.op == "placeholder" and base.name in lowered.mutations:
            out[node] = base.name
        else:
            raise Unsupported(f"an index write into {getattr(base, 'name', base)}, which is not an argument "
                              "updated in place")
        if len(node.users) > 1 or (node not in final and not all(u in writes and u.args[0] is node
                                                                   for u in node.users)):
            raise Unsupported(f"the result of the index write {node.name} is read before forward returns")
    for name, node in lowered.mutations.items():
        if node not in out:
            raise Unsupported(f"an in-place update of {name} that is not an index write")
        placeholder = next(n for n in lowered.graph.nodes if n.op == "placeholder" and n.name == name)
        if len(placeholder.users) != 1:
            raise Unsupported(f"{name} is read as well as written in place")
    return out


def _compaction(node) -> Node | None:
    """The mask of `x[mask]` (one boolean index), else None."""
    if not (isinstance(node, Node) and str(node.target) == COMPACT):
        return None
    indices = node.args[1]
    if len(indices) == 1 and isinstance(indices[0], Node) and val(indices[0]).dtype == torch.bool:
        return indices[0]
    raise Unsupported("indexing by an integer tensor (a gather) in front of an index write")


def _mask(node: Node) -> Node | None:
    """The one mask every compaction feeding `node` applies (None: there is none)."""
    found, todo, seen = set(), [node.args[2]] + [i for i in node.args[1] if i is not None], set()
    while todo:
        n = todo.pop()
        if not isinstance(n, Node) or n in seen:
            continue
        seen.add(n)
        mask = _compaction(n)
        if mask is not None:
            found.add(mask)
        else:
            todo += n.all_input_nodes
    if len(found) > 1:
        raise Unsupported("an index write whose rows are compacted by different masks")
    return found.pop() if found else None


class _Trace:
    """Reads values into a Side: compactions by the mask become loads of the uncompacted tensor,
    views of forward arguments loads through the launcher's view, elementwise ops ops."""

    def __init__(self, side: Side, mask: Node | None, kind: str) -> None:
        self.side, self.mask, self.kind = side, mask, kind

    def value(self, node):
        if not isinstance(node, Node):
            return node
        if node in self.side.names:
            return self.side.names[node]
        mask = _compaction(node)
        target = str(node.target)
        if mask is not None:
            self._leaf(node, node.args[0], compacted=True)
        elif node.op == "placeholder" or target in IDENTITY | RESHAPES | INDEXING | PERMUTES | set(LEAF_VIEWS):
            self._leaf(node, node, compacted=False)
        elif target in ELEMENTWISE:
            args = [self.value(a) for a in node.args]
            if any(isinstance(a, (list, tuple)) and a and target != "aten.full.default" for a in args):
                raise Unsupported(f"{target} with list arguments in an index write")
            self.side.names[node] = Var(f"{self.side.prefix}v_{node.name}")
            self.side.ops.append(Op(self.side.names[node], target, args, dict(node.kwargs), node))
        else:
            raise Unsupported(f"{target} in the {self.kind} of an index write")
        return self.side.names[node]

    def _leaf(self, node: Node, source: Node, compacted: bool) -> None:
        k = val(self.mask).dim() if self.mask is not None else 0
        rank = val(source).dim()
        if compacted and tuple(val(source).shape[:k]) != tuple(val(self.mask).shape):
            raise Unsupported("a mask that does not cover the leading dims of what it compacts")
        if self.kind == "rows" and self.mask is not None and (compacted and rank != k or rank > k):
            raise Unsupported("index tensors of more dims than the mask that compacts them")
        # Per row, a compacted load and an uncompacted one are the same load; per row and rest
        # element an uncompacted value broadcasts over the rows instead.
        leaf = next((x for x in self.side.leaves if x.node is source
                     and (self.kind == "rows" or x.compacted == compacted)), None)
        if leaf is None:
            leaf = Leaf(source, view_code(source), compacted, Var(f"{self.side.prefix}v_{node.name}"))
            self.side.leaves.append(leaf)
        self.side.names[node] = leaf.var


def view_code(node: Node) -> str:
    """The launcher's torch code for `node`, a view chain of one forward argument."""
    if node.op == "placeholder":
        return node.name
    target = str(node.target)
    source = node.args[0]
    if not isinstance(source, Node) or target not in IDENTITY | RESHAPES | INDEXING | PERMUTES | set(LEAF_VIEWS):
        raise Unsupported(f"{target} of a computed value in an index write")
    inner = view_code(source)
    if target in IDENTITY or target == "aten.expand.default":
        return inner  # the launcher broadcasts every load to its rows anyway
    if target in LEAF_VIEWS and target not in PERMUTES:
        return inner + LEAF_VIEWS[target](node.args)
    return leaf_replay(node, inner)

