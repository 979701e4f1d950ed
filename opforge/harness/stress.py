"""Inputs the spec did not ask for, made by the judge from the ones it did (the numerics step's stress cases).

A kernel can be right on the given inputs and wrong on the next: a softmax without the max
subtraction overflows above 88, an RMSNorm without eps is 3x off on small activations, a kernel
that ignores strides is wrong on a transposed view, one that handles only the first 64 rows is
wrong on the 65th. So, beyond the spec's variants, every verification also runs the candidate on:

- `scaled x1e-3`, `scaled x1e3`: every float input scaled (orders of magnitude down and up);
- `zeros`: the first slice of every float input set to zero (0/0 where eps is missing);
- `transposed`, `sliced`, `channels_last`: the same values in non-contiguous layouts;
- `larger`: each size constant grown alone, those that reach the constructor too (the candidate's
  model built again at them): to its declared size where the spec declares one larger than the
  shrunk run's and the budget allows, else to twice the used size plus one (odd so no power-of-two
  block divides it, past any power-of-two cap); the other constants halved to pay for it, each case
  within 1.25x the main problem's elements. The spec runs again at those sizes so derived values
  follow (`OpSpec.module`). A kernel that handles at most 64 rows, or a reduction capped at the
  K of the shrunk run, fails one of them;
- `perturbed`: the main inputs changed inside with their first and last elements kept, right
  after the main inputs, so a kernel that memoises on a few elements returns a stale result.

A case counts only where the reference supports it: when the reference raises, or turns finite
outputs into Inf/NaN on it, the case is skipped and the verdict says so. A spec opts out per kind
with `OPFORGE["stress"] = {"scaled": False, ...}` (or `False` for all), e.g. when its inputs have
a domain (probabilities, indices into a table) that scaling would leave.
"""
from __future__ import annotations

from typing import Any

import torch

from opforge.harness.compare import wide

SCALES = (1e-3, 1e3)
KINDS = ("scaled", "zeros", "layouts", "larger")


def enabled(meta: dict) -> set[str]:
    option = meta.get("stress", True)
    if option is False:
        return set()
    if option is True or option is None:
        return set(KINDS)
    return {kind for kind in KINDS if option.get(kind, True)}


def _scalable(x) -> bool:
    """A float tensor the scaled case multiplies: not a float8 one, whose narrow range is the point
    (×1e3 of an e4m3 value is NaN past 448; quantised operands come with their own scale tensors)."""
    return isinstance(x, torch.Tensor) and x.is_floating_point() and x.element_size() > 1


def scaled(inputs: list, factor: float) -> list | None:
    if not any(_scalable(x) for x in inputs):
        return None
    return [x * factor if _scalable(x) else x for x in inputs]


def zeros(inputs: list) -> list | None:
    out, changed = [], False
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 1 and x.shape[0] > 1:
            x = x.clone()
            x[0] = 0
            changed = True
        out.append(x)
    return out if changed else None


def _transposed(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(-1, -2).contiguous().transpose(-1, -2)


def _sliced(x: torch.Tensor) -> torch.Tensor:
    """The same values inside a wider buffer: rows no longer follow each other in memory."""
    wide = torch.empty(*x.shape[:-1], x.shape[-1] + 5, dtype=x.dtype, device=x.device)
    view = wide[..., 2:2 + x.shape[-1]]
    view.copy_(x)
    return view


def layouts(inputs: list) -> list[tuple[str, list]]:
    """(label, inputs) per non-contiguous layout that applies to at least one input."""
    kinds = (("transposed", lambda x: x.dim() >= 2 and x.shape[-1] > 1 and x.shape[-2] > 1, _transposed),
             ("sliced", lambda x: x.dim() >= 2 and x.shape[-1] > 1, _sliced),
             ("channels_last", lambda x: x.dim() == 4 and x.shape[1] > 1,
              lambda x: x.contiguous(memory_format=torch.channels_last)))
    cases = []
    for label, applies, make in kinds:
        hit = [isinstance(x, torch.Tensor) and x.numel() > 1 and applies(x) for x in inputs]
        if any(hit):
            cases.append((label, [make(x) if h else x for x, h in zip(inputs, hit)]))
    return cases


def perturbed(inputs: list, generator: torch.Generator) -> list | None:
    """Float inputs changed everywhere but their first and last elements."""
    out, changed = [], False
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() > 2:
            flat = wide(x.detach().clone().reshape(-1))  # float8: the arithmetic in float32, then back
            noise = torch.rand(flat.numel() - 2, generator=generator, dtype=torch.float64)
            spread = flat.abs().mean().item() or 1.0
            flat[1:-1] += ((noise - 0.5) * spread).to(flat.dtype).to(flat.device)
            x = flat.reshape(x.shape).to(x.dtype)
            changed = True
        out.append(x)
    return out if changed else None


def grown_one(used: dict[str, int], key: str, target: int, footprint, cap: int) -> dict[str, int] | None:
    """The sizes used with `key` at `target`, the other shrinkable constants halved, largest first,
    until `footprint(sizes)` fits `cap` (the grown dimension paid for by the others); None when even
    every other one at 1 does not fit."""
    from opforge.harness.spec import MIN_SHRINKABLE

    sizes = {**used, key: target}
    for _ in range(64):
        if footprint(sizes) <= cap:
            return sizes
        others = [k for k in sizes if k != key and used[k] >= MIN_SHRINKABLE and sizes[k] > 1]
        if not others:
            return None
        other = max(others, key=lambda k: sizes[k])
        sizes[other] //= 2
    return None


def larger_targets(used: dict[str, int], declared: dict[str, int]) -> dict[str, list[tuple[int, str]]]:
    """Per shrinkable size constant, the sizes to try in order with how each was chosen: its declared
    size where that is past twice the used one plus one, then twice plus one (odd, so no power-of-two
    block divides it, and past any power-of-two cap at the used size)."""
    from opforge.harness.spec import MIN_SHRINKABLE

    targets = {}
    for key, value in used.items():
        if value < MIN_SHRINKABLE:
            continue
        twice = 2 * value + 1
        tries = [(declared[key], "declared size")] if declared.get(key, 0) > twice else []
        targets[key] = tries + [(twice, f"2x+1 of {value}")]
    return targets


def supported(base_out: list, case_out: list) -> bool:
    """The reference supports a case when it keeps every finite output finite."""
    for b, c in zip(base_out, case_out):
        if isinstance(b, torch.Tensor) and b.is_floating_point() and bool(torch.isfinite(wide(b)).all()):
            if not bool(torch.isfinite(wide(c)).all()):
                return False
    return True


def numel(inputs: Any) -> int:
    return sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))


def rows(inputs: list) -> int:
    """The leading size of the first tensor input (1 for a scalar or a single row)."""
    first = next((x for x in inputs if isinstance(x, torch.Tensor)), None)
    return int(first.shape[0]) if first is not None and first.dim() >= 1 else 1


def spread_identities(model: torch.nn.Module, seed: int) -> None:
    """Parameters, and BatchNorm's running statistics, that default init leaves at an identity (a
    norm's weight of ones and bias of zeros, running mean 0 and variance 1) get seeded values around it
    (1 -> [0.5, 1.5], 0 -> [-0.1, 0.1]), as a trained model's would be: a kernel that drops the affine
    map or the statistics cannot pass by their being identities. Both sides get the same values (the
    candidate's process loads the reference's state)."""
    gen = torch.Generator().manual_seed(seed + 71)
    stats = [(n, b) for n, b in model.named_buffers() if n.rsplit(".", 1)[-1] in ("running_mean", "running_var")]
    with torch.no_grad():
        for _name, t in [*model.named_parameters(), *stats]:
            if not t.is_floating_point() or t.numel() == 0 or t.device.type == "meta":
                continue
            first = float(t.reshape(-1)[0])
            if first not in (0.0, 1.0) or not bool((t == first).all()):
                continue
            noise = (torch.rand(t.shape, generator=gen) - 0.5) * max(first, 0.2)
            t.copy_((first + noise).to(t.dtype))
