"""The conv family: one aten.convolution with its bias and the elementwise epilogue after it, read as
an implicit GEMM. For each group, M = batch * prod(output spatial) rows, N = C_out / groups columns
and K = (C_in / groups) * prod(kernel) taps; nothing is unfolded in memory, the kernel gathers the
input tile from (row, tap) indices. A transposed convolution is the same GEMM read as a gather: for
output o and tap k the input is i = (o + pad - k * dil) / stride, where that divides and is in range;
the emitter launches it once per stride phase (outputs of one residue mod the stride), each phase a
plain gather over the taps that divide there, so no tap is fetched to be masked.

Only the reference's literal hyper-parameters (stride, padding, dilation) are constants; groups
are read from the weight's shape where it tells them (Plan._groups);
every size is read at run time from the tensors, so one candidate fits every input shape. A zero
`constant_pad_nd` right before a convolution ('same' padding with an even kernel, F.pad) folds into
per-side padding. The epilogue reuses the matmul family's symbolic shapes: the result's frame is
[batch, c_out, out_0, ...], and epilogue tensors broadcast to it through strides."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.fx import Node

from opforge.backends import candidate_libraries
from opforge.codegen.exprs import ELEMENTWISE, VIEWS
from opforge.codegen.families.matmul.plan import FLOATS, identifier
from opforge.codegen.families.matmul.shapes import IDENTITY, Factor, Sizes, Tracked
from opforge.codegen.lower import Lowered, Unsupported, arg, val

CONV = "aten.convolution.default"
DIRECT_BELOW = 16  # output channels per group under which a grouped convolution is direct (tl.dot's least N)
PAD = "aten.constant_pad_nd.default"
# Launcher locals and kernel names a placeholder must not shadow.
RESERVED = {"out", "batch", "groups", "c_in", "c_out", "cout_g", "cin_g", "grid", "torch", "tl", "ModelNew",
            *candidate_libraries(),
            "M", "K"} | {f"{p}_{d}" for p in ("in", "k", "out") for d in range(3)}


@dataclass(frozen=True)
class Hyper:
    """The convolution's literal hyper-parameters, one entry per spatial dim."""

    rank: int
    stride: tuple
    pad_lo: tuple
    pad_hi: tuple
    dilation: tuple
    transposed: bool
    output_padding: tuple
    groups: int

    def out_size(self, d: int, size: str, taps: str) -> str:
        """Launcher expression of output dim `d` from the input's `size` and the kernel's `taps`."""
        s, lo, hi, dil = self.stride[d], self.pad_lo[d], self.pad_hi[d], self.dilation[d]
        reach = f"({taps} - 1)" if dil == 1 else f"{dil} * ({taps} - 1)"  # the kernel's extent minus one
        if self.transposed:
            grown = f"({size} - 1) * {s}" if s != 1 else f"{size} - 1"
            return f"{grown}{_signed(-lo - hi)} + {reach} + {self.output_padding[d] + 1}"
        spanned = f"{size}{_signed(lo + hi)} - {reach}"
        return f"({spanned} - 1) // {s} + 1" if s != 1 else spanned


def _signed(value: int) -> str:
    return f" + {value}" if value > 0 else f" - {-value}" if value < 0 else ""


def _per_dim(values, rank: int, name: str) -> tuple:
    values = tuple(values) if isinstance(values, (list, tuple)) else (values,)
    if len(values) == 1:
        values *= rank
    if len(values) != rank or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise Unsupported(f"a convolution {name} of {list(values)} (literal ints, one per spatial dim, are fused)")
    return values


def _the_convolution(lowered: Lowered) -> Node:
    convs = [n for n in lowered.graph.nodes if n.op == "call_function" and str(n.target) == CONV]
    if not convs:
        raise Unsupported("no aten.convolution in the graph")
    if len(convs) > 1:
        raise Unsupported(f"{len(convs)} convolutions; the kernel fuses one (the partitioner splits between them)")
    if len(lowered.outputs) != 1 or not isinstance(lowered.outputs[0], Node):
        raise Unsupported(f"{len(lowered.outputs)} outputs (the kernel stores one)")
    if val(convs[0]).dtype not in FLOATS:
        raise Unsupported(f"a convolution on {val(convs[0]).dtype}")
    return convs[0]


def _placeholder(node, what: str) -> Node:
    if not isinstance(node, Node) or node.op != "placeholder":
        target = str(node.target) if isinstance(node, Node) else repr(node)
        raise Unsupported(f"the convolution's {what} is computed by {target} (the kernel reads a graph input; "
                          "padding_mode other than 'zeros' lowers to such copies)")
    return node


def _folded_pad(x, rank: int) -> tuple[Node, list, list]:
    """The input under a zero constant_pad_nd, and that pad's (low, high) sides per spatial dim."""
    lo, hi = [0] * rank, [0] * rank
    if not (isinstance(x, Node) and str(x.target) == PAD):
        return x, lo, hi
    pads, value = x.args[1], arg(x, 2, "value", 0)
    if value != 0 or any(not isinstance(p, int) or p < 0 for p in pads) or len(pads) > 2 * rank:
        raise Unsupported(f"a constant_pad_nd of {list(pads)} with value {value} before the convolution "
                          "(non-negative zero padding of spatial dims is folded)")
    for j in range(len(pads) // 2):  # F.pad lists the last dim first
        lo[rank - 1 - j], hi[rank - 1 - j] = pads[2 * j], pads[2 * j + 1]
    return x.args[0], lo, hi


class Plan:
    """What the kernel computes: the convolution's operands and hyper-parameters, its epilogue and the
    output. `epilogue` is the emitter's renderer of the nodes after the convolution
    (emit/triton/conv_epilogue.py), built like the matmul family's."""

    def __init__(self, lowered: Lowered, title: str, epilogue: type) -> None:
        conv = _the_convolution(lowered)
        rank = val(conv).dim() - 2
        if rank not in (1, 2, 3):
            raise Unsupported(f"a {rank}-D convolution (1-, 2- and 3-D are fused)")
        transposed = bool(arg(conv, 6, "transposed"))
        x, lo, hi = _folded_pad(arg(conv, 0, "input"), rank)
        if transposed and any(lo + hi):
            raise Unsupported("a constant_pad_nd before a transposed convolution")
        padding = _per_dim(arg(conv, 4, "padding"), rank, "padding")
        self.hyper = Hyper(rank, _per_dim(arg(conv, 3, "stride"), rank, "stride"),
                           tuple(p + q for p, q in zip(padding, lo)), tuple(p + q for p, q in zip(padding, hi)),
                           _per_dim(arg(conv, 5, "dilation"), rank, "dilation"), transposed,
                           _per_dim(arg(conv, 7, "output_padding"), rank, "output_padding"),
                           arg(conv, 8, "groups", 1))
        names = {p.name: identifier(p.name, RESERVED) for p in lowered.placeholders}
        self.args, self.kernel = list(names.values()), f"_{title}_conv_kernel"
        self.launcher = identifier(title, set(self.args) | RESERVED)
        self.x = names[_placeholder(x, "input").name]
        self.w = names[_placeholder(arg(conv, 1, "weight"), "weight").name]
        bias = arg(conv, 2, "bias")
        self.bias = names[_placeholder(bias, "bias").name] if bias is not None else None
        self.ieee = val(conv).dtype == torch.float32
        bases = {p.name: Tracked(names[p.name], tuple((Factor(f"{names[p.name]}.shape[{i}]", s),)
                                                      for i, s in enumerate(p.shape))) for p in lowered.placeholders}
        shape = tuple(val(conv).shape)
        frame = (("batch", shape[0]), ("c_out", shape[1])) + tuple((f"out_{d}", s) for d, s in enumerate(shape[2:]))
        self.sizes = Sizes()
        self.epilogue = epilogue(conv, Tracked("out", tuple((Factor(e, s),) for e, s in frame)), bases,
                                 self.sizes, False)
        output = lowered.outputs[0]
        if output not in self.epilogue.dependent:
            raise Unsupported("the output does not depend on the convolution")
        self.result = str(self.epilogue.value(output))  # the kernel value that is stored
        self.out = self.epilogue.frames[output]  # `out` [batch, c_out, out_*] through the epilogue's views
        self.out_dtype = f"{self.x}.dtype" if val(output).dtype == val(conv).dtype else str(val(output).dtype)
        self.groups = self._groups(val(x).shape[1])
        # Export-time sizes (the export runs smaller): hints for the order of the tuning space only.
        self.cout_g = shape[1] // self.hyper.groups
        self.k_taps = val(x).shape[1] // self.hyper.groups * math.prod(val(arg(conv, 1, "weight")).shape[2:])
        # Narrow groups (depthwise: cout_g of one or a few channels) are written as a direct convolution:
        # an implicit GEMM there runs one program per group on tiles that are mostly padding.
        self.direct = not transposed and self.hyper.groups > 1 and self.cout_g < DIRECT_BELOW

    def _groups(self, c_in: int) -> str:
        """The launcher's expression of the group count. Groups often follow the channels (depthwise:
        groups=channels), which the harness shrinks: a convolution's weight [C_out, C_in / groups, ...]
        gives the count exactly at any size; a transposed one's [C_in, C_out / groups, ...] does not, so
        a depthwise one stays depthwise and any other keeps its literal count."""
        g = self.hyper.groups
        if g == 1:
            return "1"
        if not self.hyper.transposed:
            return f"{self.x}.shape[1] // {self.w}.shape[1]"
        return f"{self.x}.shape[1]" if g == c_in else str(g)


def check_epilogue_op(target: str) -> None:
    """Unsupported for a node after the convolution that is not elementwise or a view."""
    if target not in ELEMENTWISE and target not in VIEWS and target not in IDENTITY:
        raise Unsupported(f"{target} after the convolution (only an elementwise epilogue is fused; "
                          "the partitioner splits there)")
