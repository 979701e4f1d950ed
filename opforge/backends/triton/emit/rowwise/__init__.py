"""Row reductions and scans with their elementwise prologue and epilogue fused: softmax, log-softmax,
LayerNorm, RMSNorm, L1/L2/Frobenius norms, logsumexp, var/std, argmax/argmin, losses reduced to a 0-d
mean (MSE, L1, Huber, hinge, KL, BCE, cosine), cumsum/cumprod (also reversed, exclusive, masked).

families/rowwise/ reads the graph (which dims are reduced, where each value lives); here kernel.py,
finish.py and accs.py write the Triton kernels, launch.py the launcher."""
from __future__ import annotations

import keyword
import re

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.triton.emit.common import header
from opforge.backends.triton.emit.rowwise import kernel as rowwise_kernel
from opforge.backends.triton.emit.rowwise import launch as rowwise_launch
from opforge.codegen.families.rowwise.plan import analyse
from opforge.codegen.lower import Lowered


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    """A candidate per tuning configuration; raises Unsupported naming the ops or pattern it cannot fuse."""
    plan = analyse(lowered, identifier(title))
    kernels = rowwise_kernel.write(plan)

    def render(config: dict) -> str:
        return (header(f"Row-wise kernels for {title}", "rowwise", lowered) + "import math\n"
                + rowwise_launch.source(plan, kernels, config)
                + model_new(lowered, plan.title, shapes))

    return Kernel("rowwise", rowwise_launch.SPACE, render)


def identifier(title: str) -> str:
    """The op title as a Python identifier: the launcher's name and the kernels' prefix."""
    name = re.sub(r"\W", "_", title)
    return name if name.isidentifier() and not keyword.iskeyword(name) else "op_" + name
