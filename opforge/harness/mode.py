"""The mode the reference runs in, and the candidate beside it.

KernelBench's harness calls `Model(*get_init_inputs())` as constructed, and an `nn.Module` starts in
training mode: BatchNorm normalises with the batch's own statistics (and updates its running ones),
which is what a KernelBench solution is checked against. So a spec's default mode is `train`. A
spec written for inference (BatchNorm folded with its running statistics) says
`OPFORGE["mode"] = "eval"`. In either mode the dropout modules are off: a random forward cannot be
compared value by value, and a reference that is random anyway (`F.dropout` called with
`training=True`) is refused with its reason (`randomness`) rather than judged against one draw.
The verdict's `sizes.mode` says which mode was checked.
"""
from __future__ import annotations

import copy
from typing import Any

import torch

from opforge.harness.compare import flatten_outputs
from opforge.harness.errors import SpecError

MODES = ("train", "eval")
DEFAULT = "train"
_DROPOUT = (torch.nn.Dropout, torch.nn.Dropout1d, torch.nn.Dropout2d, torch.nn.Dropout3d,
            torch.nn.AlphaDropout, torch.nn.FeatureAlphaDropout)


def mode_of(meta: dict | None) -> str:
    """The spec's mode (`OPFORGE["mode"]`), `train` where it names none; a bad value is the spec's error."""
    value = (meta or {}).get("mode", DEFAULT)
    if value not in MODES:
        raise SpecError(f"OPFORGE['mode'] is {value!r}: it must be one of {', '.join(map(repr, MODES))}")
    return value


def set_mode(model: Any, mode: str) -> Any:
    """`model` in `mode` with its dropout modules off; returns it (a non-module is returned as it is)."""
    if isinstance(model, torch.nn.Module):
        model.train(mode == "train")
        for sub in model.modules():
            if isinstance(sub, _DROPOUT):
                sub.eval()
    return model


def traced(model: Any, mode: str) -> Any:
    """`model` in `mode` for tracing its function (the expert's lowering): in train mode its norms still
    normalise with the batch's statistics but no longer update their running ones, a side effect on
    the model's buffers that no output shows (neither the judge nor KernelBench compares buffers)."""
    set_mode(model, mode)
    if mode == "train":
        for sub in model.modules():
            if isinstance(sub, torch.nn.modules.batchnorm._NormBase):
                sub.track_running_stats = False
    return model


def randomness(model: Any, inputs: list) -> str | None:
    """Why the reference is random (two copies of it, called on `inputs` from two states of the random
    generator, disagree past rounding), or None. The caller forks the generator's state."""
    outs = []
    for seed in (0x5EED, 0xD1CE):
        args = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        torch.manual_seed(seed)
        with torch.no_grad():
            outs.append([t.detach() for t in flatten_outputs(copy.deepcopy(model)(*args))])
    for k, (a, b) in enumerate(zip(*outs)):
        if isinstance(a, torch.Tensor) and a.is_floating_point() and a.shape == b.shape \
                and not torch.allclose(a.double(), b.double(), rtol=1e-3, atol=1e-5, equal_nan=True):  # fp8 too
            return (f"the reference is random: its output {k} changes with the random generator's state "
                    "(dropout called with training=True, or a random op in forward): a kernel cannot be "
                    "compared with one draw of it; make the reference deterministic")
    return None
