"""The shape properties a spec has at its declared sizes, which a CPU run's smaller sizes must keep
when the cost budget shrinks a size below harness/spec.py's MIN_SHRINKABLE.

Read on meta tensors (nothing allocated), one fact per op the reference's forward runs, in order:
each output's dims that are at least 2 (a dim of 1 hides a stride, a tail, a reduction's order), and
for a convolution whether each spatial input spans the dilated kernel (with padding it need not, but
if the declared sizes do, every tap must still meet an interior input), for a GroupNorm whether a
group holds more than one channel (one channel normalises to its bias: a kernel computing x - x
passes). A smaller size keeps the
facts when the forward still runs the same ops and every property true at the declared sizes still
holds; divisibility (channels by groups) is the constructor's to refuse (spec.shrink_sizes undoes
such a halving)."""
from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

CONV = torch.ops.aten.convolution.default
GROUP_NORM = torch.ops.aten.native_group_norm.default


def _flat(obj: Any) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in _flat(item)]
    return []


class _Facts(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.facts: list[tuple] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        wide = tuple(tuple(d >= 2 for d in t.shape) for t in _flat(out))
        spans: tuple = ()
        if func is CONV and not args[6]:  # a forward convolution: the input spans the dilated kernel
            x, w, dil = args[0], args[1], list(args[5])
            rank = x.dim() - 2
            dil = (dil * rank)[:rank] if len(dil) == 1 else dil
            spans = tuple(x.shape[2 + d] >= dil[d] * (w.shape[2 + d] - 1) + 1 for d in range(rank))
        elif func is GROUP_NORM:  # each group still holds more than one channel
            spans = (args[4] // args[6] >= 2,)
        self.facts.append((str(func), wide, spans))
        return out


def facts(module, inputs_of, model_of) -> list[tuple] | None:
    """The facts of the spec module's forward on its main inputs, or None where it cannot run on meta
    (`inputs_of(module)`, `model_of(module)` build them, as harness/spec.py does)."""
    try:
        with torch.device("meta"), torch.no_grad():
            inputs, model = inputs_of(module), model_of(module)
            with _Facts() as mode:
                model(*inputs)
        return mode.facts
    except Exception:
        return None


def kept(declared: list[tuple] | None, smaller: list[tuple] | None) -> str | None:
    """None when `smaller` keeps every fact of `declared`, else what it loses, in words."""
    if declared is None:
        return "the forward does not run on meta tensors at the declared sizes, so its shapes cannot be checked"
    if smaller is None:
        return "the forward no longer runs on these sizes"
    if [f[0] for f in declared] != [f[0] for f in smaller]:
        return "the forward runs other ops at these sizes"
    for i, ((op, wide, spans), (_, wide2, spans2)) in enumerate(zip(declared, smaller)):
        if len(wide) != len(wide2) or any(len(a) != len(b) for a, b in zip(wide, wide2)):
            return f"op {i} ({op}) changes rank"
        if any(a and not b for w, w2 in zip(wide, wide2) for a, b in zip(w, w2)):
            return f"op {i} ({op}) gets a dim of 1 that was at least 2"
        if any(a and not b for a, b in zip(spans, spans2)):
            return f"op {i} ({op}): the input no longer spans the dilated kernel, or a group holds one channel"
    return None
