"""What both sort plans share: which graph nodes carry no tensor work (export's shape guards), which
ops only reinterpret a value, and folding a constant through an ATen op."""
from __future__ import annotations

import operator

import torch
from torch.fx import Node

from opforge.codegen.lower import Unsupported, val

# Shape guards torch.export leaves around a data-dependent size (bincount's length): no tensor work.
GUARDS = {"aten._assert_scalar.default", "aten.sym_size.int", "aten.sym_constrain_range_for_size.default",
          "aten._assert_tensor_metadata.default"}
IDENTITY = {"aten.clone.default", "aten.alias.default", "aten.detach.default", "aten.lift_fresh_copy.default",
            "aten.contiguous.default"}
RESHAPES = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.unsqueeze.default",
            "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default", "aten.expand.default"}


def work(lowered) -> list[Node]:
    """The graph's call_function nodes that compute tensors (guards and symbolic arithmetic left out)."""
    out = []
    for node in lowered.graph.nodes:
        if node.op != "call_function" or str(node.target) in GUARDS:
            continue
        if node.target is not operator.getitem and not isinstance(val(node), (torch.Tensor, tuple)):
            continue  # operator.ge/eq/or_ on SymInts feeding the guards
        out.append(node)
    return out


def fold(node: Node, args: list, kwargs: dict):
    """A Python number: the elementwise `node` applied by torch itself to constant arguments, so the
    folded value rounds and casts exactly as the reference's op does."""
    dtype = val(node).dtype
    tensors = [torch.tensor(a) if isinstance(a, (int, float, bool)) else a for a in args]
    try:
        out = node.target(*tensors, **kwargs)
    except Exception as exc:  # an op torch itself refuses on these constants
        raise Unsupported(f"{node.target} on constants: {type(exc).__name__}") from None
    out = out.to(dtype) if isinstance(out, torch.Tensor) else torch.tensor(out, dtype=dtype)
    if out.numel() != 1:
        raise Unsupported(f"{node.target} of a constant tensor of {out.numel()} elements")
    return out.reshape(()).item()


def non_unit(shape) -> list[int]:
    return [int(s) for s in shape if s != 1]
