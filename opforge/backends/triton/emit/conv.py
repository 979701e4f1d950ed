"""The Triton emitter of the conv family: the tuning space, the launcher (output sizes from the
input's shape by the conv formula, epilogue tensors expanded to the output) and the candidate."""
from __future__ import annotations

import math
import re

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.triton.emit.common import header
from opforge.backends.triton.emit import conv_direct, conv_kernel
from opforge.backends.triton.emit.conv_kernel import PHASE_ARGS
from opforge.backends.triton.emit.conv_epilogue import ConvEpilogue
from opforge.backends.triton.emit.matmul_kernel import fill
from opforge.codegen.families.conv.plan import Plan
from opforge.codegen.families.matmul.shapes import replay, unreplay
from opforge.codegen.lower import Lowered

# The GPU space, after the matmul family's sweep (emit/triton/matmul.py) with taller M tiles, since
# M = batch * output positions is the long side of a convolution's GEMM. Not yet timed on a GPU.
SPACE = (
    {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 8, "num_stages": 3},
    {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3},
    {"BLOCK_M": 256, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 8, "num_stages": 2},
    {"BLOCK_M": 128, "BLOCK_N": 16, "BLOCK_K": 16, "num_warps": 4, "num_stages": 2},
)


def first_config(cout_g: int, k_taps: int, rank: int = 2) -> dict:
    """The configuration verified first, fitted to the group's width and depth (export-time sizes).
    The CPU interpreter pays per program and per K step, not per element, so it wants few, large
    tiles: on a transposed 3x3x3 Conv3d 16->8 over 8x16^3, 128x64x32 verified in 42 s, 256x64x64
    in 8 s and 512x32x64 in 5 s; a depthwise 3-D one went from 59 s (128x16x16) to 11 s (512x16x32).
    BLOCK_N is the narrowest power of two covering C_out / groups (16 at least, tl.dot's minimum),
    so a depthwise group of one channel wastes 15 columns, not 63; still a sane GPU tile.
    A 3-D gather is the build's cost instead: its sm_90 compile grows with the [BLOCK_M, BLOCK_K]
    tile (a strided ConvTranspose3d: 512x64 28-42 s, 512x32 or 256x64 15-18 s, 256x32 4 s, #36),
    and a CPU run's sizes fit a phase's rows and taps in one or two tiles anyway: 256 x 32 there."""
    block_n = min(64, max(16, 1 << (cout_g - 1).bit_length()))
    block_k = 16 if k_taps <= 16 else 32 if k_taps <= 32 or rank >= 3 else 64
    block_m = 256 if rank >= 3 or block_n > 32 else 512
    return {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "num_warps": 8, "num_stages": 2}


# The direct kernel's space (conv_direct.py): no K tile; BLOCK_N spans output channels across groups.
DIRECT_SPACE = (
    {"BLOCK_M": 128, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2},
    {"BLOCK_M": 256, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2},
    {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2},
    {"BLOCK_M": 256, "BLOCK_N": 16, "num_warps": 4, "num_stages": 2},
)


def first_direct_config(c_out: int) -> dict:
    """The direct kernel's first configuration: BLOCK_N the narrowest power of two covering the output
    channels (64 at most), BLOCK_M 512 (256 at 64 channels): the interpreter pays per program and per tap."""
    block_n = min(64, max(16, 1 << (c_out - 1).bit_length()))
    return {"BLOCK_M": 256 if block_n == 64 else 512, "BLOCK_N": block_n, "num_warps": 8, "num_stages": 2}


def _phase_loops(h, body: list[str]) -> list[str]:
    """`body` (a transposed launch) nested in a loop over each dim's stride phases: the outputs
    o = q * stride + res, the phase's first tap k0 (k0 * dilation = res + padding mod stride; none:
    k_d, so the phase has no taps and gets the bias and epilogue alone), its taps, one every
    stride / gcd(stride, dilation), and base, the input its first tap reads for q = 0."""
    lines, pad = ["# Stride phases: each launch computes the outputs of one residue per dim."], ""
    for d in range(h.rank):
        s, p, dil = h.stride[d], h.pad_lo[d], h.dilation[d]
        if s == 1:
            lines.append(f"{pad}cnt_{d}, k0_{d}, taps_{d}, base_{d}, res_{d} = out_{d}, 0, k_{d}, {p}, 0")
            continue
        step = s // math.gcd(s, dil)
        lines += [f"{pad}for res_{d} in range(min({s}, out_{d})):",
                  f"{pad}    cnt_{d} = (out_{d} - res_{d} + {s - 1}) // {s}",
                  f"{pad}    k0_{d} = next((k for k in range({s}) if (res_{d} + {p} - k * {dil}) % {s} == 0), k_{d})",
                  f"{pad}    taps_{d} = max(0, (k_{d} - k0_{d} + {step - 1}) // {step})",
                  f"{pad}    base_{d} = (res_{d} + {p} - k0_{d} * {dil}) // {s}"]
        pad += "    "
    return lines + [pad + line for item in body for line in item.split("\n")]


def _launcher_source(plan: Plan, config: dict) -> str:
    h, s, x, w = plan.hyper, plan.sizes, plan.x, plan.w
    dims = range(h.rank)
    c_out = f"{w}.shape[1] * groups" if h.transposed else f"{w}.shape[0]"
    lines = [f"batch, c_in = {x}.shape[0], {x}.shape[1]"]
    lines += [f"in_{d}, k_{d} = {x}.shape[{d + 2}], {w}.shape[{d + 2}]" for d in dims]
    lines += [f"groups = {plan.groups}", f"c_out = {c_out}", "cout_g = c_out // groups",
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
    launch += [f"k_{d}" for d in dims] + ["cout_g", "groups"]
    launch += [f"{v}_{d}" for d in dims for v in PHASE_ARGS] if h.transposed else []
    launch += [f"*{t}.stride()" for t in strided]
    blocks = ("BLOCK_M", "BLOCK_N") if plan.direct else ("BLOCK_M", "BLOCK_N", "BLOCK_K")
    launch += [f"{k}={c[k]}" for k in blocks + ("num_warps", "num_stages")]
    grid = (f"triton.cdiv(c_out, {c['BLOCK_N']})" if plan.direct
            else f"triton.cdiv(cout_g, {c['BLOCK_N']}), groups")
    if h.transposed:  # one launch per stride phase, each over the phase's outputs
        count = " * ".join(["batch"] + [f"cnt_{d}" for d in dims])
    call = [f"grid = (triton.cdiv({count}, {c['BLOCK_M']}), {grid})", f"{plan.kernel}[grid](", fill(launch, "    ") + ")"]
    lines += _phase_loops(h, call) if h.transposed else call
    lines.append(f"return {final}")
    head = (f"\n\n# Tiles {'x'.join(str(c[k]) for k in blocks)}, {c['num_warps']} warps, "
            f"{c['num_stages']} stages: one configuration of the tuning space.\n")
    body = "\n".join("    " + line for item in lines for line in item.split("\n"))
    return head + f"def {plan.launcher}({', '.join(plan.args)}):\n" + body + "\n"


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    """An implicit-GEMM kernel for a graph of one aten.convolution and its elementwise epilogue;
    Unsupported names what is not."""
    name = re.sub(r"\W", "_", title).strip("_") or "op"
    plan = Plan(lowered, "op_" + name if name[0].isdigit() else name, ConvEpilogue)

    source = (conv_direct if plan.direct else conv_kernel).kernel_source(plan)

    def render(config: dict) -> str:
        return (header(f"Convolution kernel for {title}", "conv", lowered) + source
                + _launcher_source(plan, config) + model_new(lowered, plan.launcher, shapes))

    if plan.direct:
        first = first_direct_config(plan.cout_g * plan.hyper.groups)
        return Kernel("conv", (first,) + tuple(c for c in DIRECT_SPACE if c != first), render)
    first = first_config(plan.cout_g, plan.k_taps, plan.hyper.rank)
    return Kernel("conv", (first,) + tuple(c for c in SPACE if c != first), render)
