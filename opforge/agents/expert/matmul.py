"""Matmul generator: one aten.mm/aten.bmm with its operands' views and the elementwise epilogue after
it, as a tiled `tl.dot` kernel that applies the epilogue to the fp32 accumulator before one store.

Shapes are symbolic (matmul_shapes): a dimension is a product of *factors*, runtime sizes the launcher
can name (`x.shape[0]`), so views that merge or split dims (a 3-D input flattened to rows, the result
viewed back) replay at any size, not at the export's. Operand views become strides (the launcher
rebuilds the view and passes `.stride()`; `reshape` copies only where strides cannot express it).
Epilogue tensors are expanded to the result's shape: stride 0 on broadcast dims covers a bias [N], a
column [M, 1], a 0-d tensor and a full [M, N] alike. A scalar multiply on an operand is moved onto the
accumulator."""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

import torch
from torch.fx import Node

from opforge.agents.expert import emit
from opforge.agents.expert.matmul_kernel import fill, kernel_source, offsets_of
from opforge.agents.expert.matmul_shapes import IDENTITY, RESHAPES, Factor, Sizes, Tracked, _numel, _replay, _unreplay, _view
from opforge.agents.expert.exprs import EXPR, TL_DTYPES, VIEWS, Var
from opforge.agents.expert.lower import Lowered, Unsupported, val

MM_TARGETS = {"aten.mm.default": False, "aten.bmm.default": True}  # target -> batched
SCALES = {"aten.mul.Tensor": "*", "aten.mul.Scalar": "*", "aten.div.Tensor": "/", "aten.div.Scalar": "/"}
FLOATS = {torch.float32, torch.float16, torch.bfloat16}
ARANGES = {"aten.arange.start_step": (0, 1, 2), "aten.arange.start": (0, 1, None), "aten.arange.default": (None, 0, None)}
RESERVED = {"lhs", "rhs", "out", "batch", "M", "N", "K", "grid", "torch", "triton", "tl", "ModelNew"}

# Best guess first; fp32 timings on an H200 (do_bench median, L2 flushed), one run each, from the
# sweep in benchmarks/expert_matmul_sweep.py.
# 64x64x32 / 4 warps: the all-rounder, and best of 7 tiles on matrix-vector [8192, 8192] @ [8192, 1]
#   (0.26 ms; 64x16x32 took 0.37); small tiles also keep the CPU interpreter quick (512^3: ~5 s).
# 128x128x32 / 8 warps: 1.5x over 64x64 on Linear 4096 + GELU (6.5 vs 9.9 ms); even on 2048^3 mm.
# 64x128: wide N, 6.6 ms on that Linear; 128x128x64 / 2 stages: 6.3 ms there, 5% behind on a plain mm.
# 32x32: more programs for small problems. SKINNY_M goes first when M <= 16: 2.4x over 64x64 on
#   [1, 8192] @ [8192, 8192] (0.114 vs 0.272 ms).
SPACE = (
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "num_warps": 8, "num_stages": 2},
    {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 4, "num_stages": 2},
)
SKINNY_M = {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 1, "num_warps": 4, "num_stages": 3}


# -- the graph: operands, then the epilogue ------------------------------------------------------------

def _scalar_factor(node: Node) -> tuple[Node, str, object] | None:
    """(tensor, op, scalar) for `x * s` or `x / s` with a Python number s (export puts the tensor first)."""
    op = SCALES.get(str(node.target))
    if op is None or len(node.args) != 2 or node.kwargs:
        return None
    a, b = node.args
    number = isinstance(b, (int, float)) and not isinstance(b, bool)
    return (a, op, b) if isinstance(a, Node) and number else None


def _trace(node: Node, bases: dict, scale: list | None = None) -> Tracked:
    """A placeholder through views; with `scale`, scalar multiplies are collected there too."""
    chain = []
    while node.op != "placeholder":
        target = str(node.target)
        folded = _scalar_factor(node) if scale is not None else None
        if folded:
            node = folded[0]
            scale.append(folded[1:])
            continue
        if target not in VIEWS and target not in IDENTITY:
            raise Unsupported(f"a matmul operand or epilogue tensor computed by {target} (only views are fused)")
        chain.append(node)
        node = node.args[0]
    tracked = bases[node.name]
    for view in reversed(chain):
        tracked = _view(tracked, view)
    return tracked


@dataclass
class Leaf:
    name: str
    tracked: Tracked  # the tensor, through its own views
    frame: Tracked  # the view of the result it broadcasts against


class Epilogue:
    """The nodes between the matmul and the output, rendered as statements on the accumulator tile."""

    def __init__(self, mm: Node, mm_frame: Tracked, bases: dict, sizes: Sizes, batched: bool) -> None:
        self.bases, self.sizes, self.batched = bases, sizes, batched
        self.dependent = {mm}  # the nodes computed from the product, found in topological order
        for node in mm.graph.nodes:
            self.dependent |= {node} if any(a in self.dependent for a in node.all_input_nodes) else set()
        self.frames: dict[Node, Tracked] = {mm: mm_frame}
        self.values: dict = {mm: Var("acc")}
        self.lines, self.leaves, self.fused = [], [], []  # kernel statements, loaded tensors, op names

    def value(self, node, frame: Tracked | None = None):
        if isinstance(node, (list, tuple)):
            return type(node)(self.value(n, frame) for n in node)
        if not isinstance(node, Node):
            return node
        key = node if node in self.dependent else (node, frame)
        if key not in self.values:
            self.values[key] = self._dependent(node) if node in self.dependent else self._operand(node, frame)
        return self.values[key]

    def _dependent(self, node: Node):
        target = str(node.target)
        if target in VIEWS or target in IDENTITY:  # a view of the result re-indexes it; the tile is the same
            value = self.value(node.args[0])
            if target == "aten.expand.default":
                raise Unsupported("the epilogue broadcasts the matmul result (aten.expand)")
            self.frames[node] = _view(self.frames[node.args[0]], node)
            return value
        if target not in EXPR:
            raise Unsupported(f"{target} after the matmul (only elementwise epilogues are fused)")
        inputs = [a for a in node.all_input_nodes if a in self.dependent]
        for a in inputs:
            self.value(a)
        frame = self.frames[inputs[0]]
        if any(self.frames[a] != frame for a in inputs):
            raise Unsupported(f"{target} combines differently viewed copies of the matmul result")
        if tuple(val(node).shape) != tuple(_numel(d) for d in frame.dims):
            raise Unsupported(f"{target} broadcasts the matmul result to a larger shape")
        self.frames[node] = frame
        return self._emit(node, frame)

    def _operand(self, node: Node, frame: Tracked):
        target = str(node.target)
        index = self._index(node, frame)
        if index is not None:
            return index
        if node.op == "placeholder" or target in VIEWS or target in IDENTITY:
            return self._load(node, frame)
        if target not in EXPR:
            raise Unsupported(f"{target} in an epilogue operand (only elementwise ops are fused)")
        return self._emit(node, frame)

    def _emit(self, node: Node, frame: Tracked) -> Var:
        target = str(node.target)
        args = [self.value(a, frame) for a in node.args]
        kwargs = {k: self.value(v, frame) for k, v in node.kwargs.items()}
        if target in SCALES and args[1] == 1 and not isinstance(args[1], str) and not kwargs:
            return args[0]  # the decompositions' `x * 1` (addmm's alpha and beta)
        name = Var(f"v_{node.name}")
        self.lines.append(f"{name} = {EXPR[target](args, kwargs)}  # {target}")
        self.fused.append(target.replace("aten.", "").split(".")[0])
        return name

    def _index(self, node: Node, frame: Tracked) -> Var | None:
        """An `arange` along one dim of the result (torch.tril/triu's masks, position-dependent epilogues)
        is that dim's index in the tile: rm, rn or the batch. None when `node` is not such a chain."""
        chain = node
        while chain.op == "call_function" and (str(chain.target) in RESHAPES | IDENTITY
                                               or str(chain.target) == "aten.expand.default"):
            chain = chain.args[0]
        if chain.op != "call_function" or str(chain.target) not in ARANGES:
            return None
        start_at, end_at, step_at = ARANGES[str(chain.target)]
        start = chain.args[start_at] if start_at is not None else 0
        end = chain.args[end_at]
        step = chain.args[step_at] if step_at is not None and len(chain.args) > step_at else 1
        shape = tuple(val(node).shape)
        placed = [i for i, size in enumerate(shape) if size != 1]
        numbers = all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end, step))
        if not numbers or len(placed) != 1 or frame.steps or len(shape) > len(frame.dims):
            raise Unsupported("an aten.arange in the epilogue other than one result dim's index")
        axis = len(frame.dims) - len(shape) + placed[0]
        if _numel(frame.dims[axis]) != shape[placed[0]]:
            raise Unsupported("an aten.arange in the epilogue that does not span a result dim")
        role = ("batch", "M", "N")[3 - len(frame.dims) + axis]
        tile = {"batch": "batch", "M": "rm[:, None]", "N": "rn[None, :]"}[role]
        tile = tile if step == 1 else f"{tile} * {step}"
        tile = tile if start == 0 else f"({start} + {tile})"
        name = Var(f"v_{node.name}")
        dtype = val(node).dtype
        cast = f".to({TL_DTYPES[dtype]})" if dtype.is_floating_point else ""
        self.lines.append(f"{name} = {tile}{cast}  # {chain.name}: {start} + {step} * the index along {role}")
        self.fused.append("arange")
        return name

    def _load(self, node: Node, frame: Tracked) -> Var:
        tracked = _trace(node, self.bases)
        for mine, theirs in zip(reversed(tracked.dims), reversed(frame.dims)):
            self.sizes.unify(mine, theirs)
        name = f"e{len(self.leaves)}"
        self.leaves.append(Leaf(name, tracked, frame))
        upcast = ".to(tl.float32)" if val(node).dtype in (torch.float16, torch.bfloat16) else ""
        offsets = offsets_of(name, self.batched)
        self.lines += [f"# {name}: {node.name} as the result's tile (stride 0 on its broadcast dims)",
                       f"{name} = tl.load({name}_ptr + {offsets}, mask=mask, other=0.0){upcast}"]
        return Var(name)


# -- the plan --------------------------------------------------------------------------------------------

class Plan:
    """What the kernel computes: the operands' views, the folded scalars, the epilogue and the output."""

    def __init__(self, lowered: Lowered, title: str) -> None:
        mm = _the_matmul(lowered)
        names = {p.name: _identifier(p.name, set()) for p in lowered.placeholders}
        bases = {p.name: Tracked(names[p.name], tuple((Factor(f"{names[p.name]}.shape[{i}]", s),)
                                                      for i, s in enumerate(p.shape))) for p in lowered.placeholders}
        self.args, self.kernel = list(names.values()), f"_{title}_matmul_kernel"
        self.launcher = _identifier(title, set(self.args))
        self.scale: list = []  # (op, number) pairs folded from operand prologues
        self.lhs, self.rhs = (_trace(a, bases, self.scale) for a in mm.args[:2])  # [batch,] M, K / K, N
        self.batched, self.sizes = MM_TARGETS[str(mm.target)], Sizes()
        self.ieee = val(mm).dtype == torch.float32
        self.epilogue = Epilogue(mm, Tracked("out", self._result_dims()), bases, self.sizes, self.batched)
        output = lowered.outputs[0]
        if output not in self.epilogue.dependent:
            raise Unsupported("the output does not depend on the matmul")
        self.result = str(self.epilogue.value(output))  # the kernel value that is stored
        self.out = self.epilogue.frames[output]  # `out` ([batch,] M, N) through the epilogue's views
        self.out_dtype = "lhs.dtype" if val(output).dtype == val(mm).dtype else str(val(output).dtype)
        # A 2-D input [M, K] giving a plain [M, N]: leading dims it has at run time fold into rows.
        kinds = {names[p.name]: p.kind for p in lowered.placeholders}
        plain = not self.batched and not self.lhs.steps and not self.out.steps and kinds[self.lhs.base] == "input"
        self.rows = self.lhs.base if plain else None
        self.skinny = _numel(self.lhs.dims[-2]) <= 16  # a row-vector problem

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


def _identifier(name: str, taken: set) -> str:
    name = re.sub(r"\W", "_", name)
    clash = name in taken | RESERVED or keyword.iskeyword(name) or re.fullmatch(r"e\d+", name)
    return name + "_" if clash or name[0].isdigit() else name


# -- rendering -------------------------------------------------------------------------------------------

def _launcher_source(plan: Plan, config: dict) -> str:
    s, b = plan.sizes, "batch, " if plan.batched else ""
    final = f"out.reshape(*{plan.rows}_rows, N)" if plan.rows else _replay(plan.out, s)  # the reference's shape
    lines = []
    if plan.rows:
        r = plan.rows
        lines += ["# Leading dims beyond the traced 2-D input fold into rows (nn.Linear, torch.matmul).",
                  f"{r}_rows = {r}.shape[:-1]", f"{r} = {r}.reshape(-1, {r}.shape[-1])"]
    lines += [f"lhs = {_replay(plan.lhs, s, {})}  # [{b}M, K]", f"rhs = {_replay(plan.rhs, s, {})}  # [{b}K, N]",
              f"{b}M, K = lhs.shape", "N = rhs.shape[-1]",
              f"out = torch.empty(({b}M, N), dtype={plan.out_dtype}, device=lhs.device)",
              "if out.numel() == 0:", f"    return {final}"]
    if plan.epilogue.leaves:
        lines.append("# Epilogue tensors broadcast to the result's shape: stride 0 where they repeat.")
    for leaf in plan.epilogue.leaves:
        frame = ", ".join(s.dim(d) for d in leaf.frame.dims)
        lines.append(f"{leaf.name} = {_replay(leaf.tracked, s, {})}.expand({frame}){_unreplay(leaf.frame, s)}")
    tensors = ["lhs", "rhs", "out"] + [leaf.name for leaf in plan.epilogue.leaves]
    c = config
    tiles = f"triton.cdiv(M, {c['BLOCK_M']}) * triton.cdiv(N, {c['BLOCK_N']})"
    launch = tensors + ["M", "N", "K"] + [f"*{t}.stride()" for t in tensors]
    launch += [f"{k}={c[k]}" for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")]
    lines += [f"grid = ({tiles}, batch)" if b else f"grid = ({tiles},)", f"{plan.kernel}[grid](",
              fill(launch, "    ") + ")", f"return {final}"]
    head = (f"\n\n# Tiles {c['BLOCK_M']}x{c['BLOCK_N']}x{c['BLOCK_K']}, GROUP_M={c['GROUP_M']}, "
            f"{c['num_warps']} warps, {c['num_stages']} stages: one configuration of the tuning space.\n")
    body = "\n".join("    " + line for item in lines for line in item.split("\n"))
    return head + f"def {plan.launcher}({', '.join(plan.args)}):\n" + body + "\n"


def generate(lowered: Lowered, title: str, shapes: dict) -> emit.Kernel:
    """A fused matmul kernel for a graph with one aten.mm/aten.bmm; Unsupported names what is not."""
    name = re.sub(r"\W", "_", title).strip("_") or "op"
    plan = Plan(lowered, "op_" + name if name[0].isdigit() else name)

    def render(config: dict) -> str:
        return (emit.header(f"Matmul kernel for {title}", "matmul", lowered) + kernel_source(plan)
                + _launcher_source(plan, config) + emit.model_new(lowered, plan.launcher, shapes))

    space = (SKINNY_M,) + SPACE if plan.skinny else SPACE + (SKINNY_M,)
    return emit.Kernel("matmul", space, render)
