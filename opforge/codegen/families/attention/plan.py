"""The attention family: softmax(q @ kᵀ * scale [+ mask]) @ v, found in the ATen graph as two bmm
around a decomposed softmax (amax, sub, exp, sum, div), for one flash-attention kernel.

Every dim is followed as axes (axes.py), so the plan knows, for each of q, k, v and the output, which
of its dims are batch (batch and heads, in any order and merged as einsum merges them), query rows
(M), keys (N), the head dim (D, DV). GQA's expand of the KV heads is an axis that k and v do not
have (stride 0: query head h reads KV head h // group, nothing materialised); a paged KV cache is
`cache[block_table]` with its block and row dims flattened into N, so key j of sequence b is row
j % block of block table[b, j // block]. What the reference computes between the first bmm and the
softmax (the scale, masks built from aranges, per-sequence lengths, a mask input) is kept as an
expression tree over the score tile (`Expr`), which the emitter renders as it is; the kept
condition's conjuncts also bound the key loop (j <= i: causal; j < len[b]: padding) and, where
tokens of one packed sequence may attend only to each other (searchsorted(cu_seqlens, token) equal
for i and j), give one program per sequence."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch.fx import Node

from opforge.codegen.exprs import ELEMENTWISE
from opforge.codegen.families.attention.axes import (GATHER, IDENTITY, PERMUTES, RESHAPES, SLICE, Axes, Axis,
                                                       permutation, reduced_dims, whole_slice)
from opforge.codegen.lower import Lowered, Unsupported, arg, val

BMM = "aten.bmm.default"
SCALARS = {"aten.mul.Tensor": "*", "aten.mul.Scalar": "*", "aten.div.Tensor": "/", "aten.div.Scalar": "/"}
VIEWS = IDENTITY | RESHAPES | PERMUTES | {"aten.expand.default"}
ARANGES = {"aten.arange.start_step", "aten.arange.start", "aten.arange.default"}
FLOATS = {torch.float32, torch.float16, torch.bfloat16}
COMPARE_FLIP = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}
MIRROR = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
AND = {"aten.bitwise_and.Tensor", "aten.logical_and.default"}
OR = {"aten.bitwise_or.Tensor", "aten.logical_or.default"}
NOT = {"aten.bitwise_not.default", "aten.logical_not.default"}


# -- the expression between the first bmm and the softmax ------------------------------------------

@dataclass(frozen=True)
class Expr:
    """kind: "score" (the q @ kᵀ tile), "op" (an elementwise ATen op of `args`), "index" (an arange
    along the dim `axes`), "load" (input `name` read at the dims `dims`), "segment" (1 + the packed
    sequence of the token index `axes`, from the boundaries `name`), "const" (`value`)."""

    kind: str
    target: str = ""
    args: tuple = ()
    kwargs: tuple = ()
    axes: tuple = ()
    name: str = ""
    dims: tuple = ()
    value: object = None


@dataclass
class Operand:
    """A tensor the kernel reads: input `name` with its dims as axes; a paged one is `name[table]`."""

    name: str
    dims: list
    dtype: torch.dtype
    table: str | None = None
    table_dims: list = field(default_factory=list)


@dataclass
class Bounds:
    causal: str | None = None  # "le" (j <= i) or "lt" (j < i)
    length: Expr | None = None  # keys j < length (a per-batch value)
    length_inclusive: bool = False  # j <= length instead
    segments: str | None = None  # the cu_seqlens input: one program per packed sequence


class Plan:
    def __init__(self, lowered: Lowered, names: dict[str, str]) -> None:
        self.names = names
        scores, pv = _the_bmms(lowered)
        self.pre, probs = _softmax(pv)
        self.axes = ax = Axes(names)
        self.scale: list = []  # (op, number) folded from q and k
        q_src, k_src = (_source(a, self.scale) for a in scores.args[:2])
        v_scale: list = []
        v_src = _source(pv.args[1], v_scale)
        if v_scale:
            raise Unsupported("a scalar multiply on v")
        lhs, rhs = ax.dims(scores.args[0]), ax.dims(scores.args[1])
        ax.unify(lhs[0], rhs[0])
        ax.unify(lhs[2], rhs[1])
        ax.memo[scores] = [lhs[0], lhs[1], rhs[2]]
        self._score_path(scores, probs)
        p, vd = ax.dims(pv.args[0]), ax.dims(pv.args[1])
        if [ax.fine(d) for d in p] != [ax.fine(d) for d in ax.memo[scores]]:
            raise Unsupported("the softmax's probabilities are not the scores' layout")
        ax.unify(p[0], vd[0])
        ax.unify(p[2], vd[1])
        ax.memo[pv] = [p[0], p[1], vd[2]]
        self.batch, self.m, self.n = ax.fine(lhs[0]), ax.fine(lhs[1]), ax.fine(rhs[2])
        self.d, self.dv = ax.fine(lhs[2]), ax.fine(vd[2])
        self._check_groups()
        self.q, self.k, self.v = self._operand(q_src, False), self._operand(k_src), self._operand(v_src)
        out = lowered.outputs[0]
        self.out_dims = [ax.fine(d) for d in ax.dims(out)]
        self.out_dtype = val(out).dtype
        self._check_coverage()
        self.qk_dtype, self.pv_dtype = val(scores.args[0]).dtype, val(pv.args[0]).dtype
        self.expr = self._expr(self.pre, [ax.fine(d) for d in ax.dims(self.pre)])
        self.bounds = self._bounds()

    # -- axes -----------------------------------------------------------------------------------

    def group_of(self, a: Axis) -> str:
        a = self.axes.find(a)
        for name in ("batch", "m", "n", "d", "dv"):
            if a in getattr(self, name):
                return name
        raise Unsupported("an operand dim that is neither batch, query, key nor head dim")

    def _check_groups(self) -> None:
        if len(self.m) > 1 or len(self.d) != 1 or len(self.dv) != 1:
            raise Unsupported("query rows or head dims spread over several dims")
        if not 1 <= len(self.n) <= 2:
            raise Unsupported("keys spread over more than a block table's two dims")

    def _score_path(self, scores: Node, probs: Node) -> None:
        """Dims of every value from the scores to the probabilities (elementwise ops keep their
        score operand's; the softmax's keepdim reductions make the key dim a 1)."""
        ax, path = self.axes, {scores}
        for node in scores.graph.nodes:
            if node in path or node.op != "call_function":
                continue
            inputs = [a for a in node.args if isinstance(a, Node) and a in path]
            if not inputs:
                continue
            target, src = str(node.target), inputs[0]
            if target in ELEMENTWISE:
                if tuple(val(src).shape) != tuple(val(node).shape):
                    raise Unsupported("a broadcast of the scores before the softmax")
                ax.memo[node] = ax.dims(src)
            elif target in ("aten.amax.default", "aten.sum.dim_IntList"):
                ax.memo[node] = [() if i in reduced_dims(node) else d for i, d in enumerate(ax.dims(src))]
            elif target in VIEWS or target == SLICE:
                ax.dims(node)
            elif node is not probs and target != BMM:
                raise Unsupported(f"{target} on the scores")
            path.add(node)
            if node is probs:
                break

    def _operand(self, src: Node, keyed: bool = True) -> Operand:
        ax = self.axes
        if str(src.target) == GATHER:
            cache, table = ax.gathers[src]
            dims = [ax.dims(cache)[0]] + ax.dims(src)[len(val(table).shape):]
            if len(self.n) != 2:
                raise Unsupported("a gathered operand whose keys are not a block table's blocks and rows")
            return Operand(self.names[cache.name], dims, val(cache).dtype, self.names[table.name],
                           ax.dims(table))
        if src.op != "placeholder":
            raise Unsupported("an attention operand that is not an input")
        if keyed and len(self.n) != 1:
            raise Unsupported("keys over two dims without a block table")
        return Operand(self.names[src.name], ax.dims(src), val(src).dtype)

    def _check_coverage(self) -> None:
        """Each operand's dims are axes the kernel indexes; the output holds each of its axes once."""
        ax = self.axes
        allowed = {"q": {"batch", "m", "d"}, "k": {"batch", "n", "d"}, "v": {"batch", "n", "dv"}}
        for name, op in (("q", self.q), ("k", self.k), ("v", self.v)):
            dims = op.dims[1:] if op.table else op.dims
            for d in dims + op.table_dims:
                if any(self.group_of(a) not in allowed[name] for a in ax.fine(d)):
                    raise Unsupported(f"{name} has a dim the attention does not index it by")
        seen = [a for d in self.out_dims for a in d]
        if sorted(map(id, seen)) != sorted(map(id, self.batch + self.m + self.dv)):
            raise Unsupported("the output is not one value per (batch, query, head dim)")

    # -- the expression before the softmax ----------------------------------------------------------

    def _expr(self, node, dims: list) -> Expr:
        if not isinstance(node, Node):
            return Expr("const", value=node)
        ax, target = self.axes, str(node.target)
        if node in ax.memo and node.op != "placeholder":
            if target in ELEMENTWISE:
                return self._op(node, dims)
            if node.op != "placeholder":  # the bmm and its views: the score tile itself
                return Expr("score")
        if node.op == "placeholder":
            return Expr("load", name=self.names[node.name], dims=tuple(dims))
        if target in ELEMENTWISE:
            return self._op(node, dims)
        if target in VIEWS or target == SLICE and whole_slice(node):
            return self._expr(node.args[0], _dims_before(node, dims))
        if target in ARANGES:
            return self._arange(node, dims)
        if target == "aten.searchsorted.Tensor":
            return self._segment(node, dims)
        raise Unsupported(f"{target} in the attention's mask")

    def _op(self, node: Node, dims: list) -> Expr:
        args = []
        for a in node.args:
            if isinstance(a, Node):
                shape = tuple(val(a).shape)
                sub = dims[len(dims) - len(shape):] if shape else []
                args.append(self._expr(a, [() if s == 1 else d for d, s in zip(sub, shape)]))
            else:
                args.append(Expr("const", value=a))
        return Expr("op", str(node.target), tuple(args), tuple(sorted(node.kwargs.items(), key=str)))

    def _arange(self, node: Node, dims: list) -> Expr:
        start, end, step = _arange_args(node)
        if start != 0 or step != 1 or len(dims) != 1 or not dims[0]:
            raise Unsupported("an arange other than 0..n along one dim in the mask")
        if end != _numel(dims[0]):
            raise Unsupported("an arange shorter or longer than the dim it indexes")
        return Expr("index", axes=tuple(dims[0]))

    def _segment(self, node: Node, dims: list) -> Expr:
        bounds, x = node.args[0], node.args[1]
        right = node.kwargs.get("right", False) or node.kwargs.get("side") == "right"
        if bounds.op != "placeholder" or len(val(bounds).shape) != 1 or not right:
            raise Unsupported("a searchsorted other than right=True over an input's boundaries")
        index = self._expr(x, dims)
        while index.kind == "op" and index.target == "aten._to_copy.default":
            index = index.args[0]
        if index.kind != "index" or tuple(index.axes) not in (tuple(self.m), tuple(self.n)):
            raise Unsupported("a searchsorted of something other than the token index")
        return Expr("segment", axes=index.axes, name=self.names[bounds.name])

    # -- what bounds the key loop ------------------------------------------------------------------

    def _bounds(self) -> Bounds:
        out, e = Bounds(), _uncast(self.expr)  # softmax(dtype=float32)'s cast keeps -inf
        if not (e.kind == "op" and e.target == "aten.where.self"):
            self._no_segments(e)
            return out
        cond, a, b = e.args
        if _is_neg_inf(a):
            keep = _conjuncts(cond, True)
        elif _is_neg_inf(b):
            keep = _conjuncts(cond, False)
        else:
            keep = []
        for op, x, y in keep:
            self._bound(out, op, _uncast(x), _uncast(y))
        if out.segments is None:
            self._no_segments(e)
        return out

    def _bound(self, out: Bounds, op: str, x: Expr, y: Expr) -> None:
        if x.kind != "index" and y.kind == "index" or x.kind == "segment" and y.kind != "segment":
            op, x, y = MIRROR[op], y, x
        m, n = tuple(self.m), tuple(self.n)
        if x.kind == y.kind == "segment" and op == "eq" and x.name == y.name and {x.axes, y.axes} == {m, n} and m:
            out.segments = x.name
        elif x.kind == y.kind == "index" and x.axes == n and y.axes == m and m and op in ("le", "lt"):
            out.causal = op
        elif x.kind == "index" and x.axes == n and op in ("lt", "le") and _per_batch(y, self):
            out.length, out.length_inclusive = y, op == "le"

    def _no_segments(self, e: Expr) -> None:
        if _any(e, lambda x: x.kind == "segment"):
            raise Unsupported("a packed-sequence id (searchsorted) not used as 'same sequence' in the kept mask")


# -- helpers -------------------------------------------------------------------------------------------

def _the_bmms(lowered: Lowered) -> tuple[Node, Node]:
    bmms = [n for n in lowered.graph.nodes if n.op == "call_function" and str(n.target) == BMM]
    if len(bmms) != 2:
        raise Unsupported(f"{len(bmms)} bmm in the graph (attention is two: q @ kᵀ and probabilities @ v)")
    if len(lowered.outputs) != 1 or not isinstance(lowered.outputs[0], Node):
        raise Unsupported("attention with other than one output")
    if any(val(b).dtype not in FLOATS for b in bmms):
        raise Unsupported("an attention bmm on a non-float dtype")
    return bmms[0], bmms[1]


def _softmax(pv: Node) -> tuple[Node, Node]:
    """(the softmax's input, its div) behind the second bmm's lhs: exp(x - amax(x)) / sum(exp)."""
    node = pv.args[0]
    while isinstance(node, Node) and str(node.target) in VIEWS:
        node = node.args[0]
    if str(getattr(node, "target", "")) != "aten.div.Tensor":
        raise Unsupported("no softmax (exp / sum of exp) before the second bmm")
    exp, total = node.args
    if not (str(total.target) == "aten.sum.dim_IntList" and total.args[0] is exp
            and str(exp.target) == "aten.exp.default" and str(exp.args[0].target) == "aten.sub.Tensor"):
        raise Unsupported("no softmax (exp / sum of exp) before the second bmm")
    x, peak = exp.args[0].args
    if not (str(peak.target) == "aten.amax.default" and peak.args[0] is x):
        raise Unsupported("a softmax without its max subtracted")
    last = len(val(x).shape) - 1
    if reduced_dims(peak) != [last] or reduced_dims(total) != [last]:
        raise Unsupported("a softmax over a dim other than the keys' last one")
    if not (arg(peak, 2, "keepdim", False) and arg(total, 2, "keepdim", False)):
        raise Unsupported("a softmax without keepdim reductions")
    return x, node


def _source(node: Node, scale: list) -> Node:
    """The input or gather an operand views; scalar multiplies on the way are collected."""
    while node.op != "placeholder" and str(node.target) != GATHER:
        target = str(node.target)
        if target in SCALARS and len(node.args) == 2 and isinstance(node.args[1], (int, float)) \
                and not isinstance(node.args[1], bool):
            scale.append((SCALARS[target], node.args[1]))
        elif target not in VIEWS and not (target == SLICE and whole_slice(node)):
            raise Unsupported(f"{target} on an attention operand (only views, casts and a block-table gather)")
        elif target == "aten._to_copy.default" and set(node.kwargs) - {"dtype", "memory_format"}:
            raise Unsupported("a copy to another device or layout on an attention operand")
        node = node.args[0]
    return node


def _dims_before(node: Node, dims: list) -> list:
    """The dims of a mask value's input, given the view's own (read backwards)."""
    target, x = str(node.target), node.args[0]
    shape = tuple(val(x).shape)
    if target in IDENTITY:
        return dims
    if target in PERMUTES:
        perm, out = permutation(node, len(dims)), [()] * len(dims)
        for i, p in enumerate(perm):
            out[p] = dims[i]
        return out
    if target == "aten.expand.default":
        sub = dims[len(dims) - len(shape):]
        return [() if s == 1 else d for d, s in zip(sub, shape)]
    kept = iter([d for d in dims if d])
    out = [() if s == 1 else next(kept, None) for s in shape]
    if None in out or next(kept, None) is not None or any(_numel(d) != s for d, s in zip(out, shape) if d):
        raise Unsupported("a mask view other than adding or removing size-1 dims")
    return out


def _numel(dim) -> int:
    n = 1
    for a in dim:
        n *= a.size
    return n


def _arange_args(node: Node) -> tuple:
    args, target = node.args, str(node.target)
    if target == "aten.arange.default":
        return 0, args[0], 1
    return args[0], args[1], args[2] if len(args) > 2 else 1


def _is_neg_inf(e: Expr) -> bool:
    if e.kind == "op" and e.target == "aten.scalar_tensor.default":
        e = e.args[0]
    return e.kind == "const" and e.value == float("-inf")


def _uncast(e: Expr) -> Expr:
    while e.kind == "op" and e.target == "aten._to_copy.default":
        e = e.args[0]
    return e


def _conjuncts(e: Expr, negate: bool) -> list:
    """(op, x, y) comparisons whose conjunction is `e` (or not e), as far as they are comparisons."""
    if e.kind != "op":
        return []
    if e.target in NOT:
        return _conjuncts(e.args[0], not negate)
    if e.target in (OR if negate else AND):
        return _conjuncts(e.args[0], negate) + _conjuncts(e.args[1], negate)
    op = e.target.split(".")[1]
    if op in COMPARE_FLIP and e.target.endswith(".Tensor"):
        return [(COMPARE_FLIP[op] if negate else op, e.args[0], e.args[1])]
    return []


def _per_batch(e: Expr, plan: Plan) -> bool:
    """Whether `e` depends on the batch alone (a per-sequence length)."""
    ok = [True]

    def visit(x: Expr) -> None:
        if x.kind == "index" or x.kind == "score" or x.kind == "segment" or x.kind == "load" and any(
                plan.group_of(a) != "batch" for d in x.dims for a in d):
            ok[0] = False
        for a in x.args:
            visit(a)
    visit(e)
    return ok[0]


def _any(e: Expr, test) -> bool:
    return test(e) or any(_any(a, test) for a in e.args)
