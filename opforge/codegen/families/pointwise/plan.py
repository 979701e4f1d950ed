"""Pointwise chains: every elementwise op of the graph fused into one kernel over the output.

Inputs may broadcast (a bias row, a [B, 1] column, a 0-d scalar): the launcher views each input
as broadcast to the output shape and passes its strides (0 along broadcast dims), padded to
MAX_RANK dims; the kernel turns each linear output index into per-input offsets. When every input
is contiguous and already output-shaped, a fast path uses the index directly.

The plan is backend-neutral: leaves (inputs with the torch view code the launcher replays) and the
elementwise ops in graph order, each an `Op` an emitter formats with its own expression table; index
maps of the inputs (cat, pads, gathers, upsampling: indexmap.py) form a `Region` whose statements
compute their values from the output's coordinates.

A graph the chain cannot hold (an index map or a slice of a computed value, as in rotary embeddings'
`cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin))` of `x[..., :d // 2]` and a gathered cos/sin row,
or outputs of different shapes, as q and k) is planned in mapped mode when the emitter reads it
(`sections=True`): every node becomes part of the Region, elementwise ops included, and each output
is a section computed by walking back from its own coordinates to the inputs; `ops` is then empty."""
from __future__ import annotations

from dataclasses import dataclass

from torch.fx import Node

from opforge.codegen.exprs import ELEMENTWISE, Var
from opforge.codegen.lower import Lowered, Unsupported, val
from opforge.codegen.families.pointwise.indexmap import INDEX_MAPS, Region, region_nodes
from opforge.codegen.views import INDEXING, RESHAPES, index_replay

MAX_RANK = 5
LEAF_VIEWS = {  # views applied to an input before it broadcasts: replayed by the launcher
    "aten.unsqueeze.default": lambda a: f".unsqueeze({a[1]})",
    "aten.squeeze.dims": lambda a: f".squeeze({tuple(a[1])!r})",
    "aten.squeeze.dim": lambda a: f".squeeze({a[1]})",
    "aten.permute.default": lambda a: f".permute({tuple(a[1])!r})",
    "aten.t.default": lambda a: ".t()",
    "aten.transpose.int": lambda a: f".transpose({a[1]}, {a[2]})",
    "aten.expand.default": lambda a: "",
}


@dataclass(frozen=True)
class Op:
    """One elementwise node: its value's name, its target, its arguments (Vars or Python literals)."""

    var: Var
    target: str
    args: list
    kwargs: dict
    node: Node


class Plan:
    """The graph split into leaves (inputs with their view chains) and elementwise ops."""

    def __init__(self, lowered: Lowered, index_maps: bool = False, sections: bool = False) -> None:
        """`index_maps`: the emitter renders a Region's statements; one that does not (the default)
        gets Unsupported for a graph with any, rather than a chain reading values it never computes.
        `sections`: the emitter renders a mapped plan's sections ("op" statements, one section per
        output), tried where the chain is refused."""
        self.lowered = lowered
        self.leaves: dict[str, tuple[str, str]] = {}  # node name -> (placeholder, launcher view code)
        self.ops: list[Op] = []
        self.names: dict[str, Var] = {}
        self.sections: list[tuple[list, str]] | None = None  # mapped mode: (statements, value) per output
        bad = sorted({str(n.target) for n in lowered.graph.nodes if n.op == "call_function"
                      and str(n.target) not in ELEMENTWISE and str(n.target) not in LEAF_VIEWS
                      and str(n.target) not in RESHAPES and str(n.target) not in INDEXING
                      and str(n.target) not in INDEX_MAPS})
        if bad:
            raise Unsupported(f"not pointwise: {', '.join(bad)}")
        try:
            self._chain(lowered, index_maps)
        except Unsupported as exc:
            if not sections:
                raise
            try:
                self._mapped(lowered)
            except Unsupported as why:
                raise Unsupported(f"{exc}; read at mapped coordinates: {why}") from None

    def _chain(self, lowered: Lowered, index_maps: bool) -> None:
        """The elementwise ops at the output's coordinates, reading leaves and a Region of index maps of them."""
        mapped = region_nodes(lowered.graph.nodes)
        if mapped and not index_maps:
            raise Unsupported(f"index maps ({', '.join(sorted({str(n.target) for n in mapped}))}) "
                              "that this backend's pointwise emitter does not read")
        for node in lowered.graph.nodes:
            if node.op == "placeholder":
                self.leaves[node.name] = (node.name, node.name)
                self.names[node.name] = Var(f"v_{node.name}")
            elif node in mapped:
                self.names[node.name] = Var(f"v_{node.name}")
            elif node.op == "call_function":
                self._add(node)
        self.outputs = _checked_outputs(lowered)
        self.region = Region(mapped, lambda n: n.name in self.leaves) if mapped else None
        if self.region:
            self.region.emit(MAX_RANK, "mask", self.names)
        # the leaves the kernel loads at the output's own coordinates
        self.used = [n for n in self.used_leaves() if _is_used(lowered, n, set(mapped))]

    def _mapped(self, lowered: Lowered) -> None:
        """Mapped mode: inputs and the views of them the launcher replays are the leaves; every other
        node an output needs is in the Region; one section per output."""
        self.leaves, self.names, self.ops = {}, {}, []
        needed = lowered.needed()
        nodes = []
        for node in lowered.graph.nodes:
            if node.op == "placeholder":
                self.leaves[node.name] = (node.name, node.name)
            elif node.op != "call_function" or node not in needed:
                continue
            elif (code := self._leaf_view(node)) is not None:
                self.leaves[node.name] = code
            else:
                nodes.append(node)
            self.names[node.name] = Var(f"v_{node.name}")
        outputs = lowered.outputs
        if not outputs or any(not isinstance(o, Node) or o.name in self.leaves for o in outputs):
            raise Unsupported("an output that is an input or a view of one")
        self.outputs = list(outputs)
        self.region = Region(nodes, lambda n: n.name in self.leaves, memo=True)
        if not self.region.leaves:
            raise Unsupported("no input is read")
        self.sections = [self.region.emit_section(out, "mask") for out in self.outputs]
        self.used = []

    def _leaf_view(self, node: Node) -> tuple[str, str] | None:
        """(placeholder, launcher code) of a view of a leaf that torch replays as a view, else None
        (the Region maps it: a regrouping reshape, a strided slice, an expand)."""
        target, source = str(node.target), node.args[0]
        if not isinstance(source, Node) or source.name not in self.leaves or target == "aten.expand.default":
            return None
        if target not in LEAF_VIEWS and target not in RESHAPES and target not in INDEXING:
            return None
        base, code = self.leaves[source.name]
        try:
            if target in INDEXING:
                return base, index_replay(node, code)
            return base, code + (_reshape(node) if target in RESHAPES else LEAF_VIEWS[target](node.args))
        except Unsupported:
            return None

    def _add(self, node: Node) -> None:
        target = str(node.target)
        if target in LEAF_VIEWS or target in RESHAPES or target in INDEXING:
            source = node.args[0]
            if not isinstance(source, Node) or source.name not in self.leaves:
                raise Unsupported(f"a view ({target}) of a computed value")
            base, code = self.leaves[source.name]
            if target in INDEXING:  # a slice or select: bounds re-read from the run-time size
                code = index_replay(node, code)
            else:
                code += _reshape(node) if target in RESHAPES else LEAF_VIEWS[target](node.args)
            self.leaves[node.name] = (base, code)
            self.names[node.name] = Var(f"v_{node.name}")
            return
        args = [self.names[a.name] if isinstance(a, Node) else a for a in node.args]
        if target == "aten.full.default" and all(size == 1 for size in args[0]):
            args[0] = ()  # a 0-d (or all-1) constant broadcasts as its value
        if any(isinstance(a, (list, tuple)) and a for a in args):
            raise Unsupported(f"{target} with list arguments")
        self.names[node.name] = Var(f"v_{node.name}")
        self.ops.append(Op(self.names[node.name], target, args, dict(node.kwargs), node))

    def used_leaves(self) -> list[str]:
        """Leaves in placeholder order, each distinct view chain once."""
        order = [p.name for p in self.lowered.placeholders]
        return sorted(self.leaves, key=lambda n: (order.index(self.leaves[n][0]), n))

    def dtype(self, leaf: str):
        """The dtype of a leaf's values."""
        return val(next(n for n in self.lowered.graph.nodes if n.name == leaf)).dtype


def _checked_outputs(lowered: Lowered) -> list[Node]:
    outputs = lowered.outputs
    if not outputs or any(not isinstance(o, Node) or o.op == "placeholder" for o in outputs):
        raise Unsupported("an output that is an input itself")
    if len({tuple(val(o).shape) for o in outputs}) != 1:
        raise Unsupported("outputs of different shapes")
    return list(outputs)


def _reshape(node: Node) -> str:
    """A reshape of an input that only adds or drops size-1 dims (a [C] weight viewed [1, C, 1, 1]),
    replayed shape-generically: as written when its sizes are all 1 or -1, else as squeezes and
    unsqueezes, so no size of the export is baked in."""
    src, out = tuple(val(node.args[0]).shape), tuple(val(node).shape)
    written = list(node.args[1])
    if all(s in (1, -1) for s in written) and written.count(-1) <= 1:
        return f".reshape({tuple(written)!r})"
    if [s for s in src if s != 1] != [s for s in out if s != 1]:
        raise Unsupported(f"{node.target} that reshapes {list(src)} to {list(out)}")
    ones = tuple(i for i, s in enumerate(src) if s == 1)
    code = f".squeeze({ones!r})" if ones else ""
    return code + "".join(f".unsqueeze({i})" for i, s in enumerate(out) if s == 1)




def _is_used(lowered: Lowered, name: str, mapped: set) -> bool:
    node = next(n for n in lowered.graph.nodes if n.name == name)
    views = LEAF_VIEWS.keys() | RESHAPES | INDEXING
    return (any(str(u.target) not in views and u not in mapped for u in node.users)
            or any(o is node for o in lowered.outputs))
