"""Index maps in a pointwise chain: cat/stack, pads (constant, reflect, replicate), index_select,
gather, repeat, flip, roll and nearest/linear/bilinear upsampling, computed in the kernel.

Each value of an index-mapped node at an output element is found by walking back from the output's
coordinates to its sources' coordinates (cat picks its source by the coordinate along the cat dim
and shifts it; a pad masks its load and fills; an upsample scales, four loads weighted for bilinear)
down to the inputs, loaded through their run-time strides. Every size is read at run time: the
launcher computes each node's shape from its sources' shapes (`shape_code`) and passes it; only what
the reference wrote as a literal (pads, shifts, repeats, scale factors) is baked in.

The walk is written as backend-neutral statements `(name, expr)`, expr a small tree (exprs below)
that every emitter renders with its own syntax (emit/*/pointwise.py)."""
from __future__ import annotations

import itertools

import torch

from torch.fx import Node

from opforge.codegen.exprs import ELEMENTWISE
from opforge.codegen.lower import Unsupported, arg, val
from opforge.codegen.families.pointwise.shapes import (GATHERS, INDEX_MAPS, LINEAR, NEAREST, PADS, REGION_VIEWS,
                                                       RESHAPES, expand_sizes, indexed_dim, shape_code, slice_bounds,
                                                       view_sources)
from opforge.codegen.views import groups

# Expressions: a str is a name (coordinate, size, temporary) and an int or float a literal; tuples:
# ("bin", op, a, b) with op one of + - * / // % < > >= == & (// and % on non-negative integers); ("where", cond, a, b); ("min", a, b);
# ("max", a, b); ("f32", a); ("i64", a); ("load", leaf, offset, mask) of region leaf `leaf`; and in a
# Plan's mapped mode ("op", target, args, kwargs, kind, node): an elementwise core-ATen op on statement
# names (args) and literals, that an emitter formats with its own expression table, rounding the value
# to the node's dtype as the reference does; kind as Region.kind says.
def b(op: str, x, y) -> tuple:
    return ("bin", op, x, y)


def sources(node: Node) -> list[Node]:
    """The tensors an index map (or a view inside a region) reads."""
    target = str(node.target)
    if target == "aten.cat.default":
        return list(node.args[0])
    if target in ("aten.index_select.default", "aten.gather.default"):
        return [node.args[0], node.args[2]]
    if target in ELEMENTWISE:
        return [a for a in node.args if isinstance(a, Node)]
    if target in GATHERS:
        return [node.args[0], indexed_dim(node)[1]]
    return [node.args[0]]


def _bound(form: tuple, n: str):
    """A views.bound_form as an expression of the size named n."""
    kind, *a = form
    return {"zero": lambda: 0, "full": lambda: n, "frac": lambda: b("//", b("*", n, a[0]), a[1]),
            "off": lambda: b("-", n, a[0]), "lit": lambda: a[0]}[kind]()


class Region:
    """The index-mapped nodes of a plan: `leaves` (inputs or launcher views, loaded at mapped
    coordinates, g0, g1, ...), `nodes` (index maps and views of them, in graph order, z0, z1, ...) and
    `roots` (those the chain or the outputs read), with the statements computing the roots."""

    def __init__(self, nodes: list[Node], is_leaf, memo: bool = False) -> None:
        """`memo`: a node's value at the same coordinates under the same mask is computed once per
        section (emit_section), as a mapped chain reads one input element several times."""
        self.nodes = nodes
        self.memo: dict | None = {} if memo else None
        self.referenced: set[str] = set()  # the sizes and strides the statements name
        self.leaves: list[Node] = []
        for node in nodes:
            for src in sources(node):
                if not isinstance(src, Node) or not (is_leaf(src) or src in nodes):
                    raise Unsupported(f"an index map ({node.target}) of a computed value")
                if is_leaf(src) and src not in self.leaves:
                    self.leaves.append(src)
        members = set(nodes)
        self.roots = [n for n in nodes if any(u not in members for u in n.users)]
        self.rank = {n: len(val(n).shape) for n in self.leaves + nodes}
        self._count = itertools.count()
        self.statements: list[tuple[str, object]] = []
        self.kinds: dict[str, str] = {}  # each statement's value: "i" (integer), "f" (float), "b" (flag)

    def size(self, node: Node, d: int) -> str:
        """The kernel's name for node's run-time size along dim d."""
        name = f"gz{self.leaves.index(node)}_{d}" if node in self.leaves else f"z{self.nodes.index(node)}_{d}"
        self.referenced.add(name)
        return name

    def shapes(self) -> list[tuple[str, str]]:
        """The launcher's (name, Python expression) for each node's run-time shape, in graph order."""
        names = {n: f"g{j}.shape" for j, n in enumerate(self.leaves)}
        out = []
        for k, node in enumerate(self.nodes):
            out.append((f"z{k}", shape_code(node, [names[s] for s in sources(node)])))
            names[node] = f"z{k}"
        return out

    def emit(self, max_rank: int, mask: str, names: dict) -> None:
        """Statements computing every root at the output's coordinates c{max_rank - rank}..: a dim
        whose run-time size is 1 reads coordinate 0 (the output broadcasts it), whatever the export's
        sizes were, so a variant that broadcasts elsewhere still reads in bounds."""
        self.shapes()  # what the launcher cannot read back is refused here, not when rendering
        for root in self.roots:
            rank = self.rank[root]
            coords = [self.tmp(("where", b("==", self.size(root, d), 1), 0, f"c{max_rank - rank + d}"))
                      for d in range(rank)]
            value = self.value(root, coords, mask)
            self.statements.append((names[root.name], value))
            self.kinds[names[root.name]] = self.kinds[value]

    def emit_section(self, root: Node, mask: str) -> tuple[list, str]:
        """(statements, the name of the value) of one root at its own coordinates c0, c1, ..: a
        section of a mapped Plan, one per output, each with its own coordinates and memo."""
        self.shapes()
        self.statements = []
        if self.memo is not None:
            self.memo.clear()
        value = self.value(root, [f"c{d}" for d in range(self.rank[root])], mask)
        return self.statements, value

    # ----- the walk: a node's value at coordinate expressions, under a mask -----

    def tmp(self, expr) -> str:
        name = f"t{next(self._count)}"
        self.statements.append((name, expr))
        self.kinds[name] = self.kind(expr)
        return name

    def kind(self, expr) -> str:
        """Whether an expression is an integer, a float or a flag (what a C emitter must declare)."""
        if isinstance(expr, str):
            return self.kinds.get(expr, "b" if expr.startswith("mask") else "i")  # coordinates, sizes
        if isinstance(expr, (bool, int, float)):
            return "f" if isinstance(expr, float) else "i"
        op, *a = expr
        if op == "load":
            dtype = val(self.leaves[a[0]]).dtype
            return "f" if dtype.is_floating_point else "b" if dtype == torch.bool else "i"
        if op in ("f32", "i64"):
            return "f" if op == "f32" else "i"
        if op == "op":
            return a[3]
        if op == "bin" and a[0] in ("<", "<=", ">", ">=", "==", "&"):
            return "b"
        parts = [self.kind(x) for x in (a[1:] if op in ("bin", "where") else a)]
        return "f" if "f" in parts else "i" if "i" in parts else "b"

    def value(self, node: Node, coords: list, mask: str):
        if self.memo is None:
            return self._value(node, coords, mask)
        key = (node, tuple(coords), mask)
        if key not in self.memo:
            self.memo[key] = self._value(node, coords, mask)
        return self.memo[key]

    def _value(self, node: Node, coords: list, mask: str):
        if node in self.leaves:
            j = self.leaves.index(node)
            terms = [b("*", c, f"gs{j}_{d}") for d, c in enumerate(coords) if c != "0"]
            self.referenced.update(f"gs{j}_{d}" for d, c in enumerate(coords) if c != "0")
            offset = terms[0] if terms else 0
            for t in terms[1:]:
                offset = b("+", offset, t)
            return self.tmp(("load", j, offset, mask))
        target = str(node.target)
        if target in ELEMENTWISE:
            return self._elementwise(node, coords, mask)
        if target in RESHAPES:
            return self._reshape(node, coords, mask)
        if target in REGION_VIEWS:
            return self.value(node.args[0], view_sources(node, coords), mask)
        if target == "aten.cat.default":
            return self._cat(node, coords, mask)
        if target in PADS:
            return self._pad(node, PADS[target], coords, mask)
        if target in NEAREST:
            return self._nearest(node, *NEAREST[target], coords, mask)
        if target in LINEAR:
            return self._linear(node, LINEAR[target], coords, mask)
        if target in GATHERS:
            return self._indexed(node, coords, mask)
        return getattr(self, "_" + target.split(".")[1])(node, coords, mask)

    # ----- a mapped Plan's nodes: elementwise ops and views of computed values -----

    def _elementwise(self, node: Node, coords: list, mask: str):
        """The op on its arguments' values, each read at the coordinates it broadcasts from (the
        trailing dims; 0 along a dim of size 1, which sizes of 1 in the export always are)."""
        rank, args = self.rank[node], []
        for a in node.args:
            if isinstance(a, Node):
                shape, lead = tuple(val(a).shape), rank - self.rank[a]
                args.append(self.value(a, ["0" if s == 1 else coords[lead + d] for d, s in enumerate(shape)], mask))
            elif isinstance(a, (list, tuple)) and str(node.target) == "aten.full.default" and all(s == 1 for s in a):
                args.append(())  # a 0-d (or all-1) constant broadcasts as its value
            elif isinstance(a, (list, tuple)) or isinstance(a, str):
                raise Unsupported(f"{node.target} with argument {a!r}")
            else:
                args.append(a)
        if any(isinstance(v, Node) for v in node.kwargs.values()):
            raise Unsupported(f"{node.target} with a tensor keyword argument")
        dtype = val(node).dtype
        kind = "f" if dtype.is_floating_point else "b" if dtype == torch.bool else "i"
        return self.tmp(("op", str(node.target), args, dict(node.kwargs), kind, node))

    def _slice(self, node: Node, coords: list, mask: str):
        """aten.slice.Tensor: the source's coordinate is start + step * c, start read from its size."""
        d, lo, _, step = slice_bounds(node)
        src, coords = node.args[0], list(coords)
        start = _bound(lo, self.size(src, d))
        at = coords[d] if step == 1 else b("*", coords[d], step)
        coords[d] = coords[d] if start == 0 and step == 1 else self.tmp(at if start == 0 else b("+", at, start))
        return self.value(src, coords, mask)

    def _select(self, node: Node, coords: list, mask: str):
        """aten.select.int: the selected index inserted (one written from the end, from the size)."""
        src, index = node.args[0], node.args[2]
        d = node.args[1] % self.rank[src]
        at = str(index) if index >= 0 else self.tmp(b("+", self.size(src, d), index))
        return self.value(src, coords[:d] + [at] + coords[d:], mask)

    def _expand(self, node: Node, coords: list, mask: str):
        src, sizes = node.args[0], expand_sizes(node)
        lead = len(sizes) - self.rank[src]
        return self.value(src, [coords[lead + d] if sizes[lead + d] is None else "0"
                                for d in range(self.rank[src])], mask)

    def _reshape(self, node: Node, coords: list, mask: str):
        """A merge unravels its coordinate by the source's sizes; a split folds its coordinates."""
        src = node.args[0]
        at = ["0"] * self.rank[src]
        for gs, go in groups(tuple(val(src).shape), tuple(val(node).shape)):
            if len(go) == 1:
                c = coords[go[0]]
                for d in reversed(gs[1:]):
                    at[d] = self.tmp(b("%", c, self.size(src, d)))
                    c = self.tmp(b("//", c, self.size(src, d)))
                at[gs[0]] = c
            else:
                acc, stride = coords[go[-1]], self.size(node, go[-1])
                for j in reversed(go[:-1]):
                    acc = self.tmp(b("+", acc, b("*", coords[j], stride)))
                    stride = self.tmp(b("*", stride, self.size(node, j)))
                at[gs[0]] = acc
        return self.value(src, at, mask)

    def _masked(self, mask: str, cond) -> str:
        return self.tmp(b("&", mask, cond))

    def _cat(self, node: Node, coords: list, mask: str):
        parts = [s for s in node.args[0] if tuple(val(s).shape) != (0,)]  # cat skips empty 1-D tensors
        d = arg(node, 1, "dim", 0) % self.rank[node]
        lo, picks = 0, []
        for i, src in enumerate(parts):
            hi = b("+", lo, self.size(src, d)) if i else self.size(src, d)
            hi = self.tmp(hi) if i < len(parts) - 1 else None
            cond = b("<", coords[d], hi) if i == 0 else b(">=", coords[d], lo) if hi is None else \
                b("&", b(">=", coords[d], lo), b("<", coords[d], hi))
            cond = self.tmp(cond) if len(parts) > 1 else None
            shifted = coords[:d] + [self.tmp(b("-", coords[d], lo)) if i else coords[d]] + coords[d + 1:]
            picks.append((cond, self.value(src, shifted, self._masked(mask, cond) if cond else mask)))
            lo = hi
        out = picks[-1][1]
        for cond, v in reversed(picks[:-1]):
            out = self.tmp(("where", cond, v, out))
        return out

    def _pad(self, node: Node, kind: str, coords: list, mask: str):
        src, pad = node.args[0], list(node.args[1])
        rank, coords, valid = self.rank[node], list(coords), None
        for i in range(len(pad) // 2):
            d, before = rank - 1 - i, pad[2 * i]
            if before == 0 and pad[2 * i + 1] == 0:
                continue
            n = self.size(src, d)
            s = self.tmp(b("-", coords[d], before))
            if kind == "constant":
                ok = b("&", b(">=", s, 0), b("<", s, n))
                valid = self.tmp(ok if valid is None else b("&", valid, ok))
            elif kind == "reflection":  # -1 -> 1, n -> n - 2 (a pad is shorter than the size)
                s = self.tmp(("where", b("<", s, 0), b("-", 0, s), s))
                s = self.tmp(("where", b(">=", s, n), b("-", b("*", 2, b("-", n, 1)), s), s))
            else:
                s = self.tmp(("min", ("max", s, 0), b("-", n, 1)))
            coords[d] = s
        if valid is None:
            return self.value(src, coords, mask)
        loaded = self.value(src, coords, self._masked(mask, valid))
        return self.tmp(("where", valid, loaded, arg(node, 2, "value", 0)))

    def _index_select(self, node: Node, coords: list, mask: str):
        src, dim, index = node.args
        d = dim % self.rank[node]
        at = self.value(index, [coords[d]] if self.rank[index] else [], mask)
        return self.value(src, coords[:d] + [at] + coords[d + 1:], mask)

    def _gather(self, node: Node, coords: list, mask: str):
        src, dim, index = node.args[:3]
        d = dim % self.rank[node]
        at = self.value(index, coords, mask)
        return self.value(src, coords[:d] + [at] + coords[d + 1:], mask)

    def _indexed(self, node: Node, coords: list, mask: str):
        """`table[index]` (an index of any rank replacing dim d) and embedding(index, table): the
        index read at its own coordinates; a negative index counts from the end, as torch's does."""
        d, index = indexed_dim(node)
        src, k = node.args[0], self.rank[index]  # the table comes first in both
        at = self.value(index, coords[d:d + k], mask)
        if str(node.target) == "aten.index.Tensor":
            at = self.tmp(("where", b("<", at, 0), b("+", at, self.size(src, d)), at))
        return self.value(src, coords[:d] + [at] + coords[d + k:], mask)

    def _repeat(self, node: Node, coords: list, mask: str):
        src, reps = node.args[0], list(node.args[1])
        lead = len(reps) - self.rank[src]
        return self.value(src, [coords[lead + d] if reps[lead + d] == 1 else self.tmp(b("%", coords[lead + d], self.size(src, d)))
                                for d in range(self.rank[src])], mask)

    def _flip(self, node: Node, coords: list, mask: str):
        src, rank, coords = node.args[0], self.rank[node], list(coords)
        for d in {d % rank for d in node.args[1]}:
            coords[d] = self.tmp(b("-", b("-", self.size(src, d), 1), coords[d]))
        return self.value(src, coords, mask)

    def _roll(self, node: Node, coords: list, mask: str):
        src, shifts, dims = node.args[0], list(node.args[1]), list(arg(node, 2, "dims", []))
        if len(dims) != len(shifts):
            raise Unsupported("a roll of the flattened tensor (no dims)")
        coords = list(coords)
        for shift, d in zip(shifts, dims):
            d %= self.rank[node]
            n = self.size(src, d)  # ((c - s) % n + n) % n: right whatever sign `%` gives
            coords[d] = self.tmp(b("%", b("+", b("%", b("-", coords[d], shift), n), n), n))
        return self.value(src, coords, mask)

    def _scale(self, node: Node, d: int, k: int, scales_at: int):
        """The source-per-output scale along spatial dim d: 1/factor as written, else in/out sizes."""
        scales = arg(node, scales_at, "scale_factors")
        n, m = self.size(node.args[0], d), self.size(node, d)
        if scales is not None:
            return float(1.0 / scales[d - (self.rank[node] - k)])
        return self.tmp(b("/", ("f32", n), ("f32", m)))

    def _nearest(self, node: Node, kind: str, k: int, coords: list, mask: str):
        src, rank, coords = node.args[0], self.rank[node], list(coords)
        for d in range(rank - k, rank):
            pos = ("f32", coords[d]) if kind == "nearest" else b("+", ("f32", coords[d]), 0.5)
            at = ("i64", b("*", pos, self._scale(node, d, k, 2)))
            coords[d] = self.tmp(("min", at, b("-", self.size(src, d), 1)))
        return self.value(src, coords, mask)

    def _linear(self, node: Node, k: int, coords: list, mask: str):
        src, rank, corners = node.args[0], self.rank[node], []
        align = arg(node, 2, "align_corners")
        for d in range(rank - k, rank):
            n, m = self.size(src, d), self.size(node, d)
            if align:  # (n - 1) / (m - 1), 0 for a single output
                scale = self.tmp(("where", b(">", m, 1), b("/", ("f32", b("-", n, 1)), ("f32", b("-", m, 1))), 0.0))
                pos = self.tmp(b("*", ("f32", coords[d]), scale))
            else:
                scale = self._scale(node, d, k, 3)
                pos = self.tmp(("max", b("-", b("*", b("+", ("f32", coords[d]), 0.5), scale), 0.5), 0.0))
            i0 = self.tmp(("min", ("i64", pos), b("-", n, 1)))
            i1 = self.tmp(("min", b("+", i0, 1), b("-", n, 1)))
            w1 = self.tmp(("min", ("max", b("-", pos, ("f32", i0)), 0.0), 1.0))
            corners.append(((i0, self.tmp(b("-", 1.0, w1))), (i1, w1)))
        out = None
        for pick in itertools.product(*corners):
            at = list(coords[:rank - k]) + [i for i, _ in pick]
            weight = pick[0][1]
            for _, w in pick[1:]:
                weight = b("*", weight, w)
            term = b("*", weight, self.value(src, at, mask))
            out = self.tmp(term if out is None else b("+", out, term))
        return out


def region_nodes(lowered_nodes) -> list[Node]:
    """The nodes of a graph that are index maps or views of one, in graph order."""
    region: list[Node] = []
    for node in lowered_nodes:
        if node.op != "call_function":
            continue
        target = str(node.target)
        if target in INDEX_MAPS or (isinstance(node.args[0], Node) and node.args[0] in region
                                    and target in REGION_VIEWS):
            region.append(node)
    return region
