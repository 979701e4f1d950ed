"""Row reductions and scans with their elementwise prologue and epilogue fused: softmax, log-softmax,
LayerNorm, RMSNorm, L1/L2/Frobenius norms, logsumexp, var/std, argmax/argmin, losses reduced to a 0-d
mean (MSE, L1, Huber, hinge, KL, BCE, cosine), cumsum/cumprod (also reversed, exclusive, masked).

rowwise_plan.py reads the graph (which dims are reduced, where each value lives), rowwise_kernel.py
and rowwise_ops.py write the Triton kernels, rowwise_launch.py the launcher."""
from __future__ import annotations

import keyword
import re

from opforge.agents.expert import emit, rowwise_kernel, rowwise_launch
from opforge.agents.expert.lower import Lowered
from opforge.agents.expert.rowwise_plan import analyse


def generate(lowered: Lowered, title: str, shapes: dict) -> emit.Kernel:
    """A candidate per tuning configuration; raises Unsupported naming the ops or pattern it cannot fuse."""
    plan = analyse(lowered, _identifier(title))
    kernels = rowwise_kernel.write(plan)

    def render(config: dict) -> str:
        return (emit.header(f"Row-wise kernels for {title}", "rowwise", lowered) + "import math\n"
                + rowwise_launch.source(plan, kernels, config)
                + emit.model_new(lowered, plan.title, shapes))

    return emit.Kernel("rowwise", rowwise_launch.SPACE, render)


def _identifier(title: str) -> str:
    name = re.sub(r"\W", "_", title)
    return name if name.isidentifier() and not keyword.iskeyword(name) else "op_" + name
