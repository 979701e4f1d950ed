"""The Triton epilogue of a conv Plan: the matmul family's epilogue renderer (matmul_epilogue.py),
with tensors loaded at the convolution's output coordinates (sample, channel, position) instead of
a matrix's (row, column). Anything but an elementwise op or a view after the convolution is refused."""
from __future__ import annotations

from torch.fx import Node

from opforge.backends.triton.emit.matmul_epilogue import Epilogue
from opforge.codegen.families.conv.plan import check_epilogue_op
from opforge.codegen.families.matmul.shapes import Tracked
from opforge.codegen.lower import Unsupported


def conv_offsets(prefix: str, rank: int) -> str:
    """Offsets of the [BLOCK_M, BLOCK_N] output tile in a tensor of the output's shape."""
    spatial = "".join(f" + o_{d}[:, None] * stride_{prefix}{d}" for d in range(rank))
    return f"n[:, None] * stride_{prefix}n + co[None, :] * stride_{prefix}c{spatial}"


class ConvEpilogue(Epilogue):
    """The nodes between the convolution and the output, as statements on the accumulator tile."""

    TILE = "output's"

    def _dependent(self, node: Node):
        check_epilogue_op(str(node.target))
        if str(node.target) == "aten.expand.default":
            raise Unsupported("the epilogue broadcasts the convolution result (aten.expand)")
        return super()._dependent(node)

    def _index(self, node: Node, frame: Tracked) -> None:
        return None  # an arange in a conv epilogue stays an operand op, refused by _operand

    def _offsets(self, name: str, frame: Tracked) -> str:
        return conv_offsets(name, len(frame.base_dims) - 2)
