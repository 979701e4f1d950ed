"""The index maps the pointwise family reads, and the shapes and coordinates of an index-mapped
region (indexmap.py): the launcher's Python expression for each node's run-time shape from its
sources' shapes, and the views inside a region (unsqueeze, squeeze, permute) as coordinate maps."""
from __future__ import annotations

import math

import torch
from torch.fx import Node

from opforge.codegen.exprs import ELEMENTWISE
from opforge.codegen.lower import Unsupported, arg, val
from opforge.codegen.views import bound_code, bound_form, groups, permutation, slice_args

REGION_VIEWS = frozenset({"aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims",
                          "aten.permute.default", "aten.transpose.int", "aten.t.default", "aten.view.default",
                          "aten._unsafe_view.default", "aten.reshape.default"})
RESHAPES = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default"}
SHRUNK_FROM = 16  # lower() shrinks the spec's size constants of at least 16 for the export
PADS = {"aten.constant_pad_nd.default": "constant", **{f"aten.{kind}_pad{k}d.default": kind
                                                       for kind in ("reflection", "replication") for k in (1, 2, 3)}}
NEAREST = {f"aten.upsample_nearest{k}d.vec": ("nearest", k) for k in (1, 2, 3)}
NEAREST |= {f"aten._upsample_nearest_exact{k}d.vec": ("exact", k) for k in (1, 2, 3)}
LINEAR = {"aten.upsample_linear1d.vec": 1, "aten.upsample_bilinear2d.vec": 2}
# views and index maps of a computed value, read inside a region (a Plan's mapped mode only)
MAPPED_VIEWS = frozenset({"aten.slice.Tensor", "aten.select.int", "aten.expand.default"})
GATHERS = frozenset({"aten.index.Tensor", "aten.embedding.default"})  # rows picked by an integer tensor
INDEX_MAPS = frozenset({"aten.cat.default", "aten.index_select.default", "aten.gather.default", *GATHERS,
                        "aten.repeat.default", "aten.flip.default", "aten.roll.default"}
                       | PADS.keys() | NEAREST.keys() | LINEAR.keys())


def _rank(node) -> int:
    return len(val(node).shape)


def _squeezed(node: Node) -> list[int]:
    """The source dims a squeeze removes (those of size 1 in the export)."""
    src = tuple(val(node.args[0]).shape)
    dims = node.args[1] if str(node.target) == "aten.squeeze.dims" else [node.args[1]]
    return sorted({d % len(src) for d in dims if src[d % len(src)] == 1})


def reshape_code(node: Node, src: str) -> str:
    """A reshape's shape from its source's (`src`): a merge multiplies the sizes, a split keeps the
    leading factors as the reference wrote them and gives the last what remains (as views.replay)."""
    src_shape, out_shape = tuple(val(node.args[0]).shape), tuple(val(node).shape)
    written = list(node.args[1]) if len(node.args) > 1 and isinstance(node.args[1], (list, tuple)) else []
    sizes = ["1"] * len(out_shape)
    for gs, go in groups(src_shape, out_shape):
        if len(go) == 1:
            sizes[go[0]] = " * ".join(f"{src}[{d}]" for d in gs)
        elif len(written) == len(out_shape) and [written[d] for d in go].count(-1) == 1:
            # a split the reference wrote with -1 ([T, -1, head_size]): the sizes it wrote, -1 what remains
            known = math.prod(written[d] for d in go if written[d] != -1)
            for d in go:
                sizes[d] = f"{src}[{gs[0]}] // {known}" if written[d] == -1 else str(written[d])
        else:
            lead = [out_shape[d] for d in go[:-1]]
            for d, size in zip(go, lead):
                sizes[d] = str(size)
            sizes[go[-1]] = f"{src}[{gs[0]}] // {math.prod(lead)}"
    return f"({', '.join(sizes)},)" if sizes else "()"


def view_sources(node: Node, coords: list) -> list:
    """The source coordinates of a view inside a region (not a reshape: Region._reshape), given its output's."""
    target = str(node.target)
    if target == "aten.unsqueeze.default":
        d = node.args[1] % _rank(node)
        return coords[:d] + coords[d + 1:]
    if target in ("aten.squeeze.dim", "aten.squeeze.dims"):
        removed, it = _squeezed(node), iter(coords)
        return ["0" if d in removed else next(it) for d in range(_rank(node.args[0]))]
    out = [None] * _rank(node)
    for i, p in enumerate(permutation(node, _rank(node))):
        out[p] = coords[i]
    return out


def _spatial(node: Node, src: str, k: int, scales_at: int) -> str:
    """An upsample's shape: the leading dims, then the written output size or floor(size * factor)."""
    lead = _rank(node) - k
    size, scales = arg(node, 1, "output_size"), arg(node, scales_at, "scale_factors")
    if size is not None:
        if any(s >= SHRUNK_FROM for s in size):  # it may be a size constant the export shrank
            raise Unsupported(f"an upsample to a written size {list(size)}: lowering shrinks size constants "
                              f"from {SHRUNK_FROM} up, so it cannot be read back (a scale_factor is)")
        return f"tuple({src})[:{lead}] + {tuple(size)!r}"
    return (f"tuple({src})[:{lead}] + tuple(math.floor(s * f) for s, f in "
            f"zip(tuple({src})[{lead}:], {tuple(float(f) for f in scales)!r}))")


def slice_bounds(node: Node) -> tuple[int, tuple, tuple, int]:
    """A slice's dim, its start and end as bound_forms of the sliced size, and its step."""
    dim, start, end, step = slice_args(node)
    size = val(node.args[0]).shape[dim]
    return dim, bound_form(start, size), bound_form(end, size), step


def expand_sizes(node: Node) -> list:
    """An expand's sizes per output dim: None where the source's size stays (-1, or the same size),
    else the written size, refused where lowering may have shrunk it."""
    src, written = tuple(val(node.args[0]).shape), list(node.args[1])
    lead = len(written) - len(src)
    sizes = []
    for d, w in enumerate(written):
        if d >= lead and (w == -1 or w == src[d - lead]):
            sizes.append(None)
        elif w >= SHRUNK_FROM:
            raise Unsupported(f"an expand to a written size {w}: lowering shrinks size constants from "
                              f"{SHRUNK_FROM} up, so it cannot be read back")
        else:
            sizes.append(w)
    return sizes


def indexed_dim(node: Node) -> tuple[int, Node]:
    """(the dim, the index tensor) of an aten.index.Tensor (`table[positions]`, `x[:, ids]`) or an
    aten.embedding (dim 0); several index tensors (broadcast together) are refused."""
    if str(node.target) == "aten.embedding.default":
        return 0, node.args[1]
    picks = [(d, i) for d, i in enumerate(node.args[1]) if i is not None]
    if len(picks) != 1:
        raise Unsupported(f"advanced indexing with {len(picks)} index tensors")
    index = picks[0][1]
    if val(index).dtype in (torch.bool, torch.uint8):
        raise Unsupported("indexing by a boolean mask (a data-dependent shape)")
    return picks[0][0], index


def _mapped_shape(node: Node, srcs: list[str]) -> str | None:
    """The shape of an elementwise node or a view of a computed value (MAPPED_VIEWS), else None."""
    target = str(node.target)
    if target in ELEMENTWISE:
        if srcs:
            return f"tuple(torch.broadcast_shapes({', '.join(srcs)}))"
        if any(s != 1 for s in val(node).shape):
            raise Unsupported(f"{target} of shape {list(val(node).shape)} with no tensor argument")
        return repr(tuple(val(node).shape))
    src = srcs[0] if srcs else "()"
    if target == "aten.slice.Tensor":
        d, lo, hi, step = slice_bounds(node)
        n = f"{src}[{d}]"
        size = f"len(range({bound_code(lo, n)}, {bound_code(hi, n)}, {step}))"
        return f"tuple({size} if i == {d} else s for i, s in enumerate({src}))"
    if target == "aten.select.int":
        d = node.args[1] % len(val(node.args[0]).shape)
        return f"tuple(s for i, s in enumerate({src}) if i != {d})"
    if target == "aten.expand.default":
        sizes, lead = expand_sizes(node), len(node.args[1]) - len(val(node.args[0]).shape)
        return "(" + "".join(f"{src}[{d - lead}], " if w is None else f"{w}, " for d, w in enumerate(sizes)) + ")"
    return None


def shape_code(node: Node, srcs: list[str]) -> str:
    """A Python expression of node's run-time shape, given its sources' shapes (tuples or sizes)."""
    mapped = _mapped_shape(node, srcs)
    if mapped is not None:
        return mapped
    target, rank, src = str(node.target), _rank(node), srcs[0]
    if target == "aten.cat.default":
        d = arg(node, 1, "dim", 0) % rank
        parts = [s for s, n in zip(srcs, node.args[0]) if tuple(val(n).shape) != (0,)]
        return f"tuple(sum(z[{d}] for z in ({', '.join(parts)},)) if i == {d} else s for i, s in enumerate({parts[0]}))"
    if target in PADS:
        pad, adds = list(node.args[1]), [0] * rank
        for i in range(len(pad) // 2):
            adds[rank - 1 - i] = pad[2 * i] + pad[2 * i + 1]
        return f"tuple(s + a for s, a in zip({src}, {tuple(adds)!r}))"
    if target == "aten.index_select.default":
        d = node.args[1] % rank
        return f"tuple(math.prod({srcs[1]}) if i == {d} else s for i, s in enumerate({src}))"
    if target == "aten.gather.default":
        return f"tuple({srcs[1]})"
    if target in GATHERS:
        d = indexed_dim(node)[0]
        return f"tuple({src})[:{d}] + tuple({srcs[1]}) + tuple({src})[{d + 1}:]"
    if target == "aten.repeat.default":
        reps = tuple(node.args[1])
        return f"tuple(r * s for r, s in zip({reps!r}, (1,) * {len(reps) - _rank(node.args[0])} + tuple({src})))"
    if target in NEAREST:
        return _spatial(node, src, NEAREST[target][1], 2)
    if target in LINEAR:
        return _spatial(node, src, LINEAR[target], 3)
    if target == "aten.unsqueeze.default":
        d = node.args[1] % rank
        return f"tuple({src})[:{d}] + (1,) + tuple({src})[{d}:]"
    if target in ("aten.squeeze.dim", "aten.squeeze.dims"):
        keep = [d for d in range(_rank(node.args[0])) if d not in _squeezed(node)]
        return f"tuple({src}[i] for i in {tuple(keep)!r})"
    if target in RESHAPES:
        return reshape_code(node, src)
    if target in REGION_VIEWS:
        return f"tuple({src}[i] for i in {tuple(permutation(node, _rank(node)))!r})"
    return f"tuple({src})"  # flip, roll
