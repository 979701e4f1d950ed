"""Named axes for the attention family: every dimension of every value is a product of *axes*,
runtime sizes the launcher can name (`q.shape[1]`), followed through views, expands and a paged
gather. Two operands of a bmm share their batch and contraction dims, so their axes are unified;
an axis unified with a product of smaller ones is refined into them (a query-head axis [8] met by
KV heads [2] times an expand-made group [4] becomes those two, which is GQA's head mapping:
query head h = kv_head * group + g reads KV head h // group). Axes compare by identity."""
from __future__ import annotations

import math

from torch.fx import Node

from opforge.codegen.lower import Unsupported, arg, val
from opforge.codegen.views import permutation

IDENTITY = {"aten.clone.default", "aten.contiguous.default", "aten.alias.default", "aten.detach.default",
            "aten.lift_fresh_copy.default", "aten._to_copy.default"}
RESHAPES = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.unsqueeze.default",
            "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default"}
PERMUTES = {"aten.permute.default", "aten.t.default", "aten.transpose.int"}
GATHER = "aten.index.Tensor"
SLICE = "aten.slice.Tensor"  # only a whole-dim one (`k[:, :, None]`'s `:`); a part would need its bounds


class Axis:
    """A runtime size: `expr` names it in the launcher (None: made by an expand, named once unified)."""

    def __init__(self, size: int, expr: str | None) -> None:
        self.size, self.expr = size, expr

    def __repr__(self) -> str:
        return f"Axis({self.size}, {self.expr})"


Dim = tuple  # tuple[Axis, ...], outermost first; () is a literal 1


class Axes:
    """Every value's dims, and the unification of axes across a graph."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names  # placeholder -> launcher variable
        self.parent: dict[Axis, Axis] = {}
        self.split: dict[Axis, tuple] = {}
        self.memo: dict[Node, list] = {}
        self.gathers: dict[Node, tuple[Node, Node]] = {}  # index.Tensor -> (cache, table) placeholders

    def find(self, a: Axis) -> Axis:
        while a in self.parent:
            a = self.parent[a]
        return a

    def fine(self, dim: Dim) -> tuple:
        out = []
        for a in dim:
            a = self.find(a)
            out += self.fine(self.split[a]) if a in self.split else [a]
        return tuple(out)

    def size(self, a: Axis) -> str:
        a = self.find(a)
        if a.expr is None:
            raise Unsupported("a broadcast size the graph ties to no input")
        return a.expr

    def _union(self, a: Axis, b: Axis) -> None:
        if a is b:
            return
        keep, drop = (a, b) if a.expr is not None or b.expr is None else (b, a)
        self.parent[drop] = keep

    def unify(self, x: Dim, y: Dim) -> None:
        """x and y are the same dimension: pair their axes, refining the larger where sizes differ."""
        xs, ys = list(self.fine(x)), list(self.fine(y))
        while xs and ys:
            a, b = xs.pop(0), ys.pop(0)
            if a.size == b.size:
                self._union(a, b)
            elif a.size > b.size and a.size % b.size == 0:
                xs.insert(0, self._refine(a, b))
            elif b.size > a.size and b.size % a.size == 0:
                ys.insert(0, self._refine(b, a))
            else:
                raise Unsupported(f"dimensions that do not line up ({a.size} against {b.size})")
        if xs or ys:
            raise Unsupported("dimensions of different sizes meet in a matmul")

    def _refine(self, big: Axis, small: Axis) -> Axis:
        """`big` = small x rest; returns rest (its runtime size: big's over small's)."""
        rest = Axis(big.size // small.size, None if big.expr is None or small.expr is None
                    else f"({big.expr}) // ({small.expr})")
        self.split[big] = (small, rest)
        return rest

    # -- forward: the dims of a value ------------------------------------------------------------

    def dims(self, node: Node) -> list:
        if node not in self.memo:
            self.memo[node] = self._dims(node)
        return self.memo[node]

    def _dims(self, node: Node) -> list:
        shape = tuple(val(node).shape)
        if node.op == "placeholder":
            name = self.names[node.name]
            return [(Axis(s, f"{name}.shape[{i}]"),) if s != 1 else () for i, s in enumerate(shape)]
        target, x = str(node.target), node.args[0]
        if target in IDENTITY or target == SLICE and whole_slice(node):
            return self.dims(x)
        if target in PERMUTES:
            before = self.dims(x)
            return [before[p] for p in permutation(node, len(before))]
        if target in RESHAPES:
            return regroup([self.fine(d) for d in self.dims(x)], shape)
        if target == "aten.expand.default":
            before, lead = self.dims(x), len(shape) - len(self.dims(x))
            out = [(Axis(s, None),) if s != 1 else () for s in shape[:lead]]
            for d, s in zip(before, shape[lead:]):
                out.append(d if math.prod(a.size for a in d) == s else (Axis(s, None),))
            return out
        if target == GATHER:
            return self._gather(node)
        raise Unsupported(f"{target} on an attention operand (only views, casts and a block-table gather)")

    def _gather(self, node: Node) -> list:
        """cache[table]: an int tensor indexing dim 0 (a paged KV cache read by its block table)."""
        cache, indices = node.args[0], node.args[1]
        if len(indices) != 1 or not isinstance(indices[0], Node) or cache.op != "placeholder":
            raise Unsupported("an index.Tensor other than an input's dim 0 by one index tensor")
        table = indices[0]
        while str(table.target) == "aten._to_copy.default":
            table = table.args[0]
        if table.op != "placeholder" or val(table).dtype.is_floating_point:
            raise Unsupported("a gather whose indices are not an integer input (a block table)")
        self.gathers[node] = (cache, table)
        return self.dims(table) + self.dims(cache)[1:]


def whole_slice(node: Node) -> bool:
    """Whether a slice keeps all of its dim (step 1, from 0 to at least the end)."""
    args = list(node.args) + [None] * (5 - len(node.args))
    size = val(node.args[0]).shape[args[1] % len(val(node.args[0]).shape)]
    return (args[2] or 0) == 0 and (args[3] is None or args[3] >= size) and (args[4] or 1) == 1


def regroup(dims: list, shape: tuple) -> list:
    """A view as a regrouping of axes in row-major order (merges only: a split has no size to read)."""
    axes, out, i = [a for d in dims for a in d], [], 0
    for s in shape:
        group = []
        while math.prod(a.size for a in group) < s and i < len(axes):
            group.append(axes[i])
            i += 1
        if math.prod(a.size for a in group) != s:
            raise Unsupported(f"a view that splits a dimension ({[math.prod(a.size for a in d) for d in dims]} "
                              f"-> {list(shape)})")
        out.append(tuple(group))
    if i != len(axes):
        raise Unsupported("a view that drops sizes")
    return out


def source(node: Node) -> Node:
    """The placeholder or gather a value is a view of."""
    while node.op != "placeholder" and str(node.target) != GATHER:
        target = str(node.target)
        if target not in IDENTITY | RESHAPES | PERMUTES | {"aten.expand.default"} and not (
                target == SLICE and whole_slice(node)):
            raise Unsupported(f"{target} on an attention operand (only views, casts and a block-table gather)")
        if target == "aten._to_copy.default" and set(node.kwargs) - {"dtype", "memory_format"}:
            raise Unsupported("a copy to another device or layout on an attention operand")
        node = node.args[0]
    return node


def reduced_dims(node: Node) -> list[int]:
    rank = len(val(node.args[0]).shape)
    dims = arg(node, 1, "dim")
    return sorted(d % rank for d in ([dims] if isinstance(dims, int) else dims))
