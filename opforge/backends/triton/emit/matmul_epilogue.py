"""The Triton epilogue of a matmul Plan: the nodes between the matmul and the output, rendered as
statements on the fp32 accumulator tile while the plan reads them (views re-index the result, an
`arange` is a tile index, other tensors load through broadcast strides)."""
from __future__ import annotations

import torch
from torch.fx import Node

from opforge.backends.triton.emit.exprs import EXPR, TL_DTYPES
from opforge.backends.triton.emit.matmul_kernel import offsets_of
from opforge.codegen.exprs import VIEWS, Var
from opforge.codegen.families.matmul.plan import ARANGES, SCALES, Leaf, trace
from opforge.codegen.families.matmul.shapes import IDENTITY, RESHAPES, Sizes, Tracked, numel, view
from opforge.codegen.lower import Unsupported, val


class Epilogue:
    """The nodes between the matmul and the output, rendered as statements on the accumulator tile."""

    TILE = "result's"  # the accumulator's tile, as an operand's load comment names it

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
            if target in ("aten.expand.default", "aten.slice.Tensor"):
                raise Unsupported(f"the epilogue broadcasts or slices the matmul result ({target})")
            self.frames[node] = view(self.frames[node.args[0]], node)
            return value
        if target not in EXPR:
            raise Unsupported(f"{target} after the matmul (only elementwise epilogues are fused)")
        inputs = [a for a in node.all_input_nodes if a in self.dependent]
        for a in inputs:
            self.value(a)
        frame = self.frames[inputs[0]]
        if any(self.frames[a] != frame for a in inputs):
            raise Unsupported(f"{target} combines differently viewed copies of the matmul result")
        if tuple(val(node).shape) != tuple(numel(d) for d in frame.dims):
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
        if numel(frame.dims[axis]) != shape[placed[0]]:
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
        tracked = trace(node, self.bases)
        for mine, theirs in zip(reversed(tracked.dims), reversed(frame.dims)):
            self.sizes.unify(mine, theirs)
        name = f"e{len(self.leaves)}"
        self.leaves.append(Leaf(name, tracked, frame))
        upcast = ".to(tl.float32)" if val(node).dtype in (torch.float16, torch.bfloat16) else ""
        self.lines += [f"# {name}: {node.name} as the {self.TILE} tile (stride 0 on its broadcast dims)",
                       f"{name} = tl.load({name}_ptr + {self._offsets(name, frame)}, mask=mask, other=0.0){upcast}"]
        return Var(name)

    def _offsets(self, name: str, frame: Tracked) -> str:
        """The offsets of operand `name`'s tile, from its size and stride arguments."""
        return offsets_of(name, self.batched)
