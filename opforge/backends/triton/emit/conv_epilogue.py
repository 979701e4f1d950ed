"""The Triton epilogue of a conv Plan: the matmul family's epilogue renderer (matmul_epilogue.py),
with tensors loaded at the convolution's output coordinates (sample, channel, position) instead of
a matrix's (row, column). Anything but an elementwise op or a view after the convolution is refused."""
from __future__ import annotations

import torch
from torch.fx import Node

from opforge.backends.triton.emit.matmul_epilogue import Epilogue
from opforge.codegen.exprs import Var
from opforge.codegen.families.conv.plan import check_epilogue_op
from opforge.codegen.families.matmul.plan import Leaf, trace
from opforge.codegen.families.matmul.shapes import Tracked
from opforge.codegen.lower import Unsupported, val


def conv_offsets(prefix: str, rank: int) -> str:
    """Offsets of the [BLOCK_M, BLOCK_N] output tile in a tensor of the output's shape."""
    spatial = "".join(f" + o_{d}[:, None] * stride_{prefix}{d}" for d in range(rank))
    return f"n[:, None] * stride_{prefix}n + co[None, :] * stride_{prefix}c{spatial}"


class ConvEpilogue(Epilogue):
    """The nodes between the convolution and the output, as statements on the accumulator tile."""

    def _dependent(self, node: Node):
        check_epilogue_op(str(node.target))
        if str(node.target) == "aten.expand.default":
            raise Unsupported("the epilogue broadcasts the convolution result (aten.expand)")
        return super()._dependent(node)

    def _index(self, node: Node, frame: Tracked) -> None:
        return None  # an arange in a conv epilogue stays an operand op, refused by _operand

    def _load(self, node: Node, frame: Tracked) -> Var:
        tracked = trace(node, self.bases)
        for mine, theirs in zip(reversed(tracked.dims), reversed(frame.dims)):
            self.sizes.unify(mine, theirs)
        name = f"e{len(self.leaves)}"
        self.leaves.append(Leaf(name, tracked, frame))
        upcast = ".to(tl.float32)" if val(node).dtype in (torch.float16, torch.bfloat16) else ""
        rank = len(frame.base_dims) - 2
        self.lines += [f"# {name}: {node.name} as the output's tile (stride 0 on its broadcast dims)",
                       f"{name} = tl.load({name}_ptr + {conv_offsets(name, rank)}, mask=mask, other=0.0){upcast}"]
        return Var(name)
