"""Rewrites of the exported graph before any family reads it: strength reductions that turn a
pattern no emitter should write literally into one a family already handles."""
from __future__ import annotations

import torch
from torch.fx import Graph, Node
from torch.fx.experimental.symbolic_shapes import statically_known_true

from opforge.codegen.exprs import VIEWS

aten = torch.ops.aten


def val(node) -> torch.Tensor | None:
    return node.meta.get("val") if isinstance(node, Node) else None


def _is_index(node) -> bool:
    """Whether `node` is an arange(0, n) with step 1, through size-1 views."""
    while isinstance(node, Node) and str(node.target) in ("aten.unsqueeze.default", "aten.view.default"):
        node = node.args[0]
    return (isinstance(node, Node) and str(node.target) == "aten.arange.start_step" and node.args[0] == 0
            and (len(node.args) < 3 or node.args[2] == 1))


def _eye(node) -> int | None:
    """n when `node` is torch.diag's mask: arange(n) == arange(n).unsqueeze(-1), possibly viewed [n, n]."""
    if isinstance(node, Node) and str(node.target) == "aten.view.default":
        node = node.args[0]
    if not (isinstance(node, Node) and str(node.target) == "aten.eq.Tensor"):
        return None
    shape = tuple(val(node).shape)
    square = len(shape) == 2 and shape[0] == shape[1]
    return shape[0] if square and all(_is_index(x) for x in node.args) else None


def diagonal_products(graph: Graph) -> None:
    """`torch.diag(v) @ B` is a row scaling `v[:, None] * B` and `A @ torch.diag(v)` a column scaling:
    strength reduction from O(n^2 k) to O(nk), and the product becomes a pointwise kernel. torch.diag
    lowers to where(arange(n) == arange(n)[:, None], v broadcast along a row, 0)."""
    for mm in [n for n in graph.nodes if str(n.target) == "aten.mm.default"]:
        for side, other in ((0, 1), (1, 0)):
            diag = mm.args[side]
            if not (isinstance(diag, Node) and str(diag.target) == "aten.where.self" and len(diag.users) == 1):
                continue
            mask, v, zero = diag.args
            n = _eye(mask)
            if n is None or isinstance(zero, Node) and not (str(zero.target) == "aten.scalar_tensor.default"
                                                              and zero.args[0] == 0):
                continue
            if not isinstance(v, Node) or tuple(val(v).shape) not in ((1, n), (n, 1)):
                continue  # a full [n, n] matrix's diagonal would need a strided load
            with graph.inserting_before(mm):
                shape = [-1, 1] if side == 0 else [1, -1]
                scale = graph.call_function(aten.view.default, (v, shape))
                scale.meta["val"] = val(v).reshape(shape)
                product = graph.call_function(aten.mul.Tensor, (scale, mm.args[other]) if side == 0
                                              else (mm.args[other], scale))
                product.meta["val"] = val(mm)
            mm.replace_all_uses_with(product)
            graph.eliminate_dead_code()
            break


# Reductions whose result is their input's value when every reduced dim has one element.
IDENTITY_REDUCTIONS = {"aten.sum.dim_IntList", "aten.mean.dim", "aten.amax.default", "aten.amin.default",
                       "aten.prod.dim_int", "aten.max.dim", "aten.min.dim"}


def _size1_dims(node: Node) -> list[int] | None:
    """The dims an identity reduction reduces, when each has size 1 in its input, else None."""
    source = node.args[0]
    shape = tuple(val(source).shape) if isinstance(source, Node) and val(source) is not None else ()
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", [])
    dims = [dims] if isinstance(dims, int) else list(dims or range(len(shape)))
    if not shape or not all(statically_known_true(shape[d % len(shape)] == 1) for d in dims):
        return None  # a size read from data (an unbacked symbol) is not known to be 1
    return sorted(d % len(shape) for d in dims)


def _returns_an_input(out: Node, source: Node) -> bool:
    """Whether replacing `out` by `source` would make the graph return an input or a view of one,
    which no kernel computes: such a reduction stays."""
    while source.op == "call_function" and str(source.target) in VIEWS:
        source = source.args[0]
    return source.op == "placeholder" and any(u.op == "output" for u in out.users)


def size1_reductions(graph: Graph) -> None:
    """A sum, mean, max or min over dims of size 1 (a reduction after a keepdim reduction over the same
    dim: `x.sum(1, keepdim=True).max(1, keepdim=True)`) is its input, squeezed where keepdim is off.
    Families plan every reduction over the row's columns, where such a sum of a row value counted it
    once per column (KernelBench's Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp was off by log(C) twice)."""
    for node in [n for n in graph.nodes if str(n.target) in IDENTITY_REDUCTIONS]:
        dims, source = _size1_dims(node), node.args[0]
        paired = str(node.target) in ("aten.max.dim", "aten.min.dim")
        outs = [u for u in node.users] if paired else [node]
        if dims is None or paired and any(u.args[1] != 0 for u in outs):
            continue  # a paired reduction's indices are read: left alone
        for out in outs:
            if val(out) is None or val(out).dtype != val(source).dtype or _returns_an_input(out, source):
                continue
            same = tuple(val(out).shape) == tuple(val(source).shape)
            if not same:
                with graph.inserting_before(out):
                    replacement = graph.call_function(aten.squeeze.dims, (source, dims))
                replacement.meta["val"] = val(source).squeeze(dims)
            out.replace_all_uses_with(source if same else replacement)
            graph.erase_node(out)
        if paired and not node.users:
            graph.erase_node(node)
