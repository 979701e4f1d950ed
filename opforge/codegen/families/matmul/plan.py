"""The matmul family: one aten.mm/aten.bmm with its operands' views and the elementwise epilogue after
it, as a tiled `tl.dot` kernel that applies the epilogue to the fp32 accumulator before one store.

Shapes are symbolic (shapes.py): a dimension is a product of *factors*, runtime sizes the launcher
can name (`x.shape[0]`), so views that merge or split dims (a 3-D input flattened to rows, the result
viewed back) replay at any size, not at the export's. Operand views become strides (the launcher
rebuilds the view and passes `.stride()`; `reshape` copies only where strides cannot express it).
Epilogue tensors are expanded to the result's shape: stride 0 on broadcast dims covers a bias [N], a
column [M, 1], a 0-d tensor and a full [M, N] alike. A scalar multiply on an operand is moved onto the
accumulator. A dtype cast on an operand (`a.float()` of an int8, FP8 or half input: W8A8 scaled GEMMs,
mixed-precision references) is applied to the loaded tile, so the operand is read at its own width."""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

import torch
from torch.fx import Node

from opforge.backends import candidate_libraries
from opforge.codegen.exprs import VIEWS
from opforge.codegen.families.matmul.shapes import IDENTITY, Factor, Sizes, Tracked, numel, view
from opforge.codegen.lower import Lowered, Unsupported, val

MM_TARGETS = {"aten.mm.default": False, "aten.bmm.default": True}  # target -> batched
SCALES = {"aten.mul.Tensor": "*", "aten.mul.Scalar": "*", "aten.div.Tensor": "/", "aten.div.Scalar": "/"}
FLOATS = {torch.float32, torch.float16, torch.bfloat16}
FP8 = {torch.float8_e4m3fn, torch.float8_e5m2}
# Operand dtypes whose cast to a float the kernel applies to the loaded tile (every value exact in fp32).
CASTABLE = FLOATS | FP8 | {torch.int8, torch.uint8, torch.int16}
ARANGES = {"aten.arange.start_step": (0, 1, 2), "aten.arange.start": (0, 1, None), "aten.arange.default": (None, 0, None)}
# Launcher locals, the generated module's own names and the packages its candidates import.
RESERVED = {"lhs", "rhs", "out", "batch", "M", "N", "K", "grid", "torch", "tl", "ModelNew", *candidate_libraries()}

# -- the graph: operands ------------------------------------------------------------

def scalar_factor(node: Node) -> tuple[Node, str, object] | None:
    """(tensor, op, scalar) for `x * s` or `x / s` with a Python number s (export puts the tensor first)."""
    op = SCALES.get(str(node.target))
    if op is None or len(node.args) != 2 or node.kwargs:
        return None
    a, b = node.args
    number = isinstance(b, (int, float)) and not isinstance(b, bool)
    return (a, op, b) if isinstance(a, Node) and number else None


def operand_cast(node: Node) -> tuple[torch.dtype, torch.dtype] | None:
    """(from, to) for a pure dtype conversion `x.to(float)` of a CASTABLE tensor, else None."""
    if str(node.target) != "aten._to_copy.default" or set(node.kwargs) - {"dtype", "layout", "device"}:
        return None
    source = node.args[0]
    if not isinstance(source, Node) or "val" not in source.meta:
        return None
    src, dst = val(source).dtype, val(node).dtype
    return (src, dst) if src in CASTABLE and dst in FLOATS else None


def trace(node: Node, bases: dict, scale: list | None = None, casts: list | None = None) -> Tracked:
    """A placeholder through views; with `scale`, scalar multiplies are collected there too, and with
    `casts`, a dtype conversion (casts commute with views: the kernel converts the loaded tile)."""
    chain = []
    while node.op != "placeholder":
        target = str(node.target)
        folded = scalar_factor(node) if scale is not None else None
        if folded:
            node = folded[0]
            scale.append(folded[1:])
            continue
        cast = operand_cast(node) if casts is not None else None
        if cast:
            if casts:
                raise Unsupported("a matmul operand converted twice (only one dtype cast is fused)")
            casts.append(cast)
            node = node.args[0]
            continue
        if target not in VIEWS and target not in IDENTITY:
            raise Unsupported(f"a matmul operand or epilogue tensor computed by {target} (only views are fused)")
        chain.append(node)
        node = node.args[0]
    tracked = bases[node.name]
    for step in reversed(chain):
        tracked = view(tracked, step)
    return tracked


@dataclass
class Leaf:
    name: str
    tracked: Tracked  # the tensor, through its own views
    frame: Tracked  # the view of the result it broadcasts against


# -- the plan --------------------------------------------------------------------------------------------

class Plan:
    """What the kernel computes: the operands' views, the folded scalars, the epilogue and the output.
    `epilogue` is the emitter's renderer of the nodes after the matmul (emit/triton/matmul_epilogue.py):
    it is called with (mm, the result's frame, bases, sizes, batched) and gives `.value(node)`,
    `.frames`, `.dependent` and `.leaves`."""

    def __init__(self, lowered: Lowered, title: str, epilogue: type) -> None:
        mm = _the_matmul(lowered)
        names = {p.name: identifier(p.name, set()) for p in lowered.placeholders}
        bases = {p.name: Tracked(names[p.name], tuple((Factor(f"{names[p.name]}.shape[{i}]", s),)
                                                      for i, s in enumerate(p.shape))) for p in lowered.placeholders}
        self.args, self.kernel = list(names.values()), f"_{title}_matmul_kernel"
        self.launcher = identifier(title, set(self.args))
        self.scale: list = []  # (op, number) pairs folded from operand prologues
        lhs_cast, rhs_cast = [], []
        self.lhs = trace(mm.args[0], bases, self.scale, lhs_cast)  # [batch,] M, K
        self.rhs = trace(mm.args[1], bases, self.scale, rhs_cast)  # [batch,] K, N
        self.casts = (lhs_cast[0] if lhs_cast else None, rhs_cast[0] if rhs_cast else None)
        self.batched, self.sizes = MM_TARGETS[str(mm.target)], Sizes()
        self.ieee = val(mm).dtype == torch.float32
        self.dot = dot_kind(self.casts, self.ieee)
        self.epilogue = epilogue(mm, Tracked("out", self._result_dims()), bases, self.sizes, self.batched)
        output = lowered.outputs[0]
        if output not in self.epilogue.dependent:
            raise Unsupported("the output does not depend on the matmul")
        self.result = str(self.epilogue.value(output))  # the kernel value that is stored
        self.out = self.epilogue.frames[output]  # `out` ([batch,] M, N) through the epilogue's views
        same = val(output).dtype == val(mm).dtype and self.casts == (None, None)
        self.out_dtype = "lhs.dtype" if same else str(val(output).dtype)
        # A 2-D input [M, K] giving a plain [M, N]: leading dims it has at run time fold into rows.
        kinds = {names[p.name]: p.kind for p in lowered.placeholders}
        plain = not self.batched and not self.lhs.steps and not self.out.steps and kinds[self.lhs.base] == "input"
        self.rows = self.lhs.base if plain else None
        self.inputs = {name for name, kind in kinds.items() if kind == "input"}
        self.skinny = numel(self.lhs.dims[-2]) <= 16  # a row-vector problem

    def folds_rows(self, leaf: Leaf) -> bool:
        """Whether an epilogue tensor's leading dims fold into rows with the lhs's: a forward input
        read as it is, of the result's rank (the residual `x + fc(x)`; an [M, 1] column). The graph
        traced it 2-D; a 3-D input [B, T, N] at run time is the [B*T, N] the folded result is. The
        lhs itself is folded already (the launcher rebinds it)."""
        tracked = leaf.tracked
        return (self.rows not in (None, tracked.base) and not tracked.steps and tracked.base in self.inputs
                and len(tracked.dims) == 2)

    def _result_dims(self) -> tuple:
        lhs, rhs, sizes = self.lhs, self.rhs, self.sizes
        pairs = [(lhs.dims[-1], rhs.dims[-2])] + ([(lhs.dims[0], rhs.dims[0])] if self.batched else [])
        for x, y in pairs:  # a side that an expand made up takes its size from the other side
            sizes.unify(x, y)
            sizes.unify(y, x)
        made_up = any(f.expr is None and f not in sizes.resolved for f in lhs.dims[0])
        batch = ((rhs.dims[0] if made_up else lhs.dims[0]),) if self.batched else ()
        dims = batch + (lhs.dims[-2], rhs.dims[-1])
        sizes.names = {d: n for d, n in zip(dims, ("batch", "M", "N")[-len(dims):]) if d}
        return dims


def dot_kind(casts: tuple, ieee: bool) -> str:
    """How the kernel multiplies the tiles. "int8": both operands int8 cast to a float, an exact int32
    dot per K tile (IMMA) summed in fp32, as the reference's fp32 sums of exact products are; "fp8":
    both FP8, widened to bf16 (exact) for a bf16 dot with fp32 accumulation, which every GPU since
    sm80 has; otherwise each cast operand is converted to its target and the dot is fp32 ("ieee",
    true fp32 products) or half precision ("half")."""
    sources = [c[0] if c else None for c in casts]
    if sources == [torch.int8, torch.int8]:
        return "int8"
    if all(s in FP8 for s in sources):
        return "fp8"
    return "ieee" if ieee else "half"


def _the_matmul(lowered: Lowered) -> Node:
    mms = [n for n in lowered.graph.nodes if n.op == "call_function" and str(n.target) in MM_TARGETS]
    if not mms:
        raise Unsupported("no aten.mm or aten.bmm in the graph (the pointwise and rowwise generators' job)")
    if len(mms) > 1:
        raise Unsupported(f"{len(mms)} matmuls (aten.mm/aten.bmm); the kernel fuses one")
    if len(lowered.outputs) != 1 or not isinstance(lowered.outputs[0], Node):
        raise Unsupported(f"{len(lowered.outputs)} outputs (the kernel stores one)")
    if val(mms[0]).dtype not in FLOATS:
        raise Unsupported(f"a matmul on {val(mms[0]).dtype}")
    return mms[0]


def identifier(name: str, taken: set) -> str:
    name = re.sub(r"\W", "_", name)
    clash = name in taken | RESERVED or keyword.iskeyword(name) or re.fullmatch(r"e\d+", name)
    return name + "_" if clash or name[0].isdigit() else name
