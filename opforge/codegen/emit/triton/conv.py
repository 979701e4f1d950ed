"""The Triton emitter of the conv family: the tuning space, the launcher (output sizes from the
input's shape by the conv formula, epilogue tensors expanded to the output) and the candidate."""
from __future__ import annotations

import re

from opforge.codegen.candidate import Kernel, model_new
from opforge.codegen.emit.triton.common import header
from opforge.codegen.emit.triton.conv_epilogue import ConvEpilogue
from opforge.codegen.emit.triton.conv_kernel import kernel_source
from opforge.codegen.emit.triton.matmul_kernel import fill
from opforge.codegen.families.conv.plan import Plan
from opforge.codegen.families.matmul.shapes import replay, unreplay
from opforge.codegen.lower import Lowered

# Best guess first. Not yet timed on a GPU; the shapes follow the matmul family's sweep
# (emit/triton/matmul.py), with a taller M tile because M = batch * output positions is the long
# side of a convolution's GEMM. 128x64x32 goes first also because the CPU interpreter pays per
# program: fewer, larger programs verify faster there (a 3x3 Conv2d 16->32 on 8x16x32x32 takes
# about 1 s per call with 128x64, against about 3 s with 32x32).
SPACE = (
    {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 256, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 8, "num_stages": 2},
    {"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 64, "num_warps": 4, "num_stages": 2},
)
# Depthwise and narrow groups (C_out / groups <= 16): tl.dot's smallest N tile, so a group of one
# output channel wastes 15 of 16 columns instead of 63 of 64; first when the group is that narrow.
NARROW = {"BLOCK_M": 128, "BLOCK_N": 16, "BLOCK_K": 16, "num_warps": 4, "num_stages": 2}


def _launcher_source(plan: Plan, config: dict) -> str:
    h, s, x, w = plan.hyper, plan.sizes, plan.x, plan.w
    dims = range(h.rank)
    c_out = f"{w}.shape[1] * {h.groups}" if h.transposed else f"{w}.shape[0]"
    lines = [f"batch, c_in = {x}.shape[0], {x}.shape[1]"]
    lines += [f"in_{d}, k_{d} = {x}.shape[{d + 2}], {w}.shape[{d + 2}]" for d in dims]
    lines += [f"c_out = {c_out}", f"cout_g = c_out // {h.groups}",
              "# The output size of each spatial dim, from the input's at run time."]
    lines += [f"out_{d} = {h.out_size(d, f'in_{d}', f'k_{d}')}" for d in dims]
    shape = ", ".join(["batch", "c_out"] + [f"out_{d}" for d in dims])
    final = replay(plan.out, s)  # the reference's shape
    lines += [f"out = torch.empty(({shape}), dtype={plan.out_dtype}, device={x}.device)",
              "if out.numel() == 0:", f"    return {final}"]
    if plan.epilogue.leaves:
        lines.append("# Epilogue tensors broadcast to the output's shape: stride 0 where they repeat.")
    for leaf in plan.epilogue.leaves:
        frame = ", ".join(s.dim(d) for d in leaf.frame.dims)
        lines.append(f"{leaf.name} = {replay(leaf.tracked, s, {})}.expand({frame}){unreplay(leaf.frame, s)}")
    tensors = [x, w] + ([plan.bias] if plan.bias else []) + ["out"] + [leaf.name for leaf in plan.epilogue.leaves]
    strided = [x, w, "out"] + [leaf.name for leaf in plan.epilogue.leaves]
    c = config
    count = " * ".join(["batch"] + [f"out_{d}" for d in dims])
    launch = tensors + ["batch", "c_in"] + [f"in_{d}" for d in dims] + [f"out_{d}" for d in dims]
    launch += [f"k_{d}" for d in dims] + ["cout_g"] + [f"*{t}.stride()" for t in strided]
    launch += [f"{k}={c[k]}" for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages")]
    lines += [f"grid = (triton.cdiv({count}, {c['BLOCK_M']}), triton.cdiv(cout_g, {c['BLOCK_N']}), {h.groups})",
              f"{plan.kernel}[grid](", fill(launch, "    ") + ")", f"return {final}"]
    head = (f"\n\n# Tiles {c['BLOCK_M']}x{c['BLOCK_N']}x{c['BLOCK_K']}, {c['num_warps']} warps, "
            f"{c['num_stages']} stages: one configuration of the tuning space.\n")
    body = "\n".join("    " + line for item in lines for line in item.split("\n"))
    return head + f"def {plan.launcher}({', '.join(plan.args)}):\n" + body + "\n"


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    """An implicit-GEMM kernel for a graph of one aten.convolution and its elementwise epilogue;
    Unsupported names what is not."""
    name = re.sub(r"\W", "_", title).strip("_") or "op"
    plan = Plan(lowered, "op_" + name if name[0].isdigit() else name, ConvEpilogue)

    def render(config: dict) -> str:
        return (header(f"Convolution kernel for {title}", "conv", lowered) + kernel_source(plan)
                + _launcher_source(plan, config) + model_new(lowered, plan.launcher, shapes))

    narrow = plan.cout_g <= 16 or plan.k_taps <= 16
    return Kernel("conv", (NARROW,) + SPACE if narrow else SPACE + (NARROW,), render)
