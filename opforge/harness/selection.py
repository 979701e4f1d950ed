"""Index outputs compared by the values they select, not by the indices themselves.

An index output (torch.topk's or torch.sort's ids, argmax, max(dim)'s indices) is ill-conditioned
wherever the values it chooses among tie: a saturated softmax (router logits x1e3) puts most experts
at exactly 0, and which zero-probability expert fills the last slots is arbitrary; the reference's own
order among equals (torch.topk's is unspecified on a CPU) is no more right than a kernel's. So the
judge runs the reference once more under a dispatch mode that records every index-producing ATen op
with its source, finds the op each integer output came from (the indices themselves, a leading slice
of them along the op's dim as `sort(...).indices[:, :k]` takes, in any integer dtype), and the
comparison gathers the source at the candidate's indices: they must select exactly the values the
reference's select, lie in range, and be distinct per row where the reference's are. Wrong expert ids
where nothing ties select other values and fail; a kernel that breaks ties in another order passes,
and the verdict counts the positions where it did.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten
# op -> (position of the indices in its outputs, how the dim is read from (args, kwargs))
INDEX_OPS = {
    aten.topk.default: 1, aten.sort.default: 1, aten.sort.stable: 1, aten.max.dim: 1, aten.min.dim: 1,
    aten.argmax.default: 0, aten.argmin.default: 0, aten.argsort.default: 0, aten.argsort.stable: 0,
}


class Source(NamedTuple):
    values: torch.Tensor  # what the op chose among, moved so the chosen dim is last
    dim: int  # the output's dim the indices run along
    squeezed: bool  # argmax/max(dim) without keepdim: the output lacks that dim


def _dim(func, args, kwargs, source: torch.Tensor) -> int | None:
    if func in (aten.argmax.default, aten.argmin.default):
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
        return None if dim is None else dim % source.dim()
    if func in (aten.max.dim, aten.min.dim):
        return args[1] % source.dim()
    if func is aten.topk.default:
        dim = args[2] if len(args) > 2 else kwargs.get("dim", -1)
    elif func is aten.sort.stable or func is aten.argsort.stable:
        dim = kwargs.get("dim", -1)
    else:
        dim = args[1] if len(args) > 1 else kwargs.get("dim", -1)
    return dim % max(source.dim(), 1)


class _Record(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[torch.Tensor, torch.Tensor, int, bool]] = []  # source, indices, dim, keepdim

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func in INDEX_OPS and isinstance(args[0], torch.Tensor) and args[0].dim() >= 1:
            dim = _dim(func, args, kwargs, args[0])
            indices = out[INDEX_OPS[func]] if isinstance(out, (tuple, list)) else out
            if dim is not None:
                keep = func in (aten.max.dim, aten.min.dim, aten.argmax.default, aten.argmin.default)
                keep = keep and not (args[2] if len(args) > 2 else kwargs.get("keepdim", False))
                self.found.append((args[0].detach().clone(), indices.detach().clone(), dim, keep))
        return out


def index_sources(model: Any, inputs: list, expected: list) -> dict[int, Source]:
    """Per integer output of `expected` that is (a leading slice of) an index-producing op's indices,
    the values that op chose among, its dim last. Empty when nothing matches or the reference cannot
    run under the dispatch mode."""
    wanted = [i for i, e in enumerate(expected) if isinstance(e, torch.Tensor) and not e.is_floating_point()
              and not e.is_complex() and e.dtype != torch.bool and e.dim() >= 1]
    if not wanted:
        return {}
    args = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    record = _Record()
    try:
        with torch.no_grad(), record:
            model(*args)
    except Exception:  # a reference the mode cannot run: its index outputs compare exactly, as before
        return {}
    found = {}
    for i in wanted:
        for source, indices, dim, squeezed in record.found:
            match = _matches(expected[i], source, indices, dim, squeezed)
            if match is not None:
                found[i] = match
                break
    return found


def _matches(out: torch.Tensor, source, indices, dim: int, squeezed: bool) -> Source | None:
    if squeezed:  # argmax(dim) / max(dim) without keepdim: the dim comes back as size 1
        indices, out = indices.unsqueeze(dim), out.unsqueeze(dim)
    if out.dim() != indices.dim() or out.dim() != source.dim():
        return None
    size = out.shape[dim]
    rest = out.shape[:dim] + out.shape[dim + 1:]
    if size > indices.shape[dim] or rest != indices.shape[:dim] + indices.shape[dim + 1:]:
        return None
    if not torch.equal(indices.narrow(dim, 0, size).long().cpu(), out.long().cpu()):
        return None
    return Source(source.movedim(dim, -1).cpu(), dim, squeezed)


def compare_selected(index: int, ref: torch.Tensor, out: Any, source: Source) -> tuple[str | None, int]:
    """(the problem, or None; how many indices differ from the reference's while selecting equal
    values). Shape and dtype are the caller's to have checked."""
    ids, want = out.long().cpu(), ref.long().cpu()
    if source.squeezed:
        ids, want = ids.unsqueeze(source.dim), want.unsqueeze(source.dim)
    ids, want = ids.movedim(source.dim, -1), want.movedim(source.dim, -1)
    n = source.values.shape[-1]
    outside = (ids < 0) | (ids >= n)
    if bool(outside.any()):
        return (f"output {index}: {int(outside.sum())} of {ids.numel()} indices outside [0, {n}) "
                f"(got {int(ids[outside][0])})"), 0
    got, expected = source.values.gather(-1, ids), source.values.gather(-1, want)
    same = (got == expected) | (got.isnan() & expected.isnan()) if got.is_floating_point() else got == expected
    if not bool(same.all()):
        at = (~same).nonzero()[0].tolist()
        return (f"output {index}: index {int(ids[tuple(at)])} at {at} (dim {source.dim} last) selects "
                f"{float(got[tuple(at)]):.6g} where the reference's index {int(want[tuple(at)])} selects "
                f"{float(expected[tuple(at)]):.6g}; {int((~same).sum())} of {ids.numel()} indices select other values"), 0
    if ids.shape[-1] > 1 and _distinct(want) and not _distinct(ids):
        return f"output {index}: an index repeats within a row where the reference's are distinct", 0
    return None, int((ids != want).sum())


def _distinct(ids: torch.Tensor) -> bool:
    ordered = ids.sort(dim=-1).values
    return not bool((ordered[..., 1:] == ordered[..., :-1]).any())
