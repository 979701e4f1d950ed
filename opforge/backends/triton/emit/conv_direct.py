"""The Triton source of a conv Plan read as a direct convolution, for grouped convolutions whose
groups are narrow (depthwise: one input channel and a few output channels per group). The implicit
GEMM (conv_kernel.py) runs one program per group there, each on a tl.dot whose N and K tiles are
mostly padding; here a program owns BLOCK_M output positions by BLOCK_N output channels of any
groups, and a scalar loop over the (input channel of the group, tap) pairs accumulates
`input gather x weight row` products in fp32: a K step is a few [BLOCK_M, BLOCK_N] ops, and the
number of programs no longer grows with the group count (what Triton's CPU interpreter pays for).
Each output channel co reads input channels (co // cout_g) * cin_g + r of its own group."""
from __future__ import annotations

from opforge.backends.triton.emit.conv_epilogue import conv_offsets
from opforge.backends.triton.emit.conv_kernel import epilogue_lines, header_fields, hoisted_rows, unflatten
from opforge.codegen.families.conv.plan import Hyper, Plan

KERNEL = '''

@triton.jit
def {kernel}(
{pointers}
{sizes}
{strides}
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # Direct convolution over {rank} spatial dim(s), for narrow groups;
    # stride {stride}, padding {pad_lo} low / {pad_hi} high, dilation {dilation}; {groups} group(s) at export.
    # One program per (BLOCK_M output positions, BLOCK_N output channels, across groups).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    cin_g = c_in // groups
    M = batch * {out_count}
    # int64 indices: offsets pass 2**31 on large tensors (and the interpreter checks int32 arithmetic).
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(tl.int64)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Row -> (sample, output position), the output's row-major order.
{rows}
    co = rn.to(tl.int64)
    m_ok = rm < M
    n_ok = rn < cout_g * groups
{hoisted}
    # Each output channel's group: its first input channel, and its filter.
    x_n = (co // cout_g) * cin_g * stride_xc
    w_n = co * stride_wn
    # A tap's step along each dim, as int64 scalars.
{steps}
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # One loop per (input channel of the group, tap dim): each level adds its part of the offsets and
    # of the bounds check once, the innermost gathers a [BLOCK_M, BLOCK_N] tile and a weight row.
    for r in range(0, cin_g):
        x_c = x_n + r * sxc
        w_c = w_n + r * swc
{loops}
        a = tl.load(x_ptr + ({x_last}[:, None] + x_c[None, :]), mask={ok_last}[:, None] & n_ok[None, :], other=0.0)
        b = tl.load(w_ptr + {w_last}, mask=n_ok, other=0.0)
        acc += a.to(tl.float32) * b.to(tl.float32)[None, :]
    mask = m_ok[:, None] & n_ok[None, :]
{epilogue}
    tl.store(out_ptr + {out_offsets}, {result}.to(out_ptr.dtype.element_ty), mask=mask)
'''


def _steps(h: Hyper) -> list[str]:
    lines = ["sxc = tl.cast(stride_xc, tl.int64)", "swc = tl.cast(stride_wc, tl.int64)"]
    for d in range(h.rank):
        dil = f" * {h.dilation[d]}" if h.dilation[d] != 1 else ""
        lines += [f"sx{d} = tl.cast(stride_x{d}, tl.int64){dil}", f"sw{d} = tl.cast(stride_w{d}, tl.int64)"]
    return ["    " + line for line in lines]


def _loops(h: Hyper) -> tuple[list[str], str, str, str]:
    """The nested tap loops (under the channel loop) and the innermost names of the row offset, the
    row mask and the weight offset. A side with no padding needs no check: the output size formula
    keeps every tap inside the input there."""
    lines, x_prev, ok_prev, w_prev = [], "x_m", "m_ok", "w_c"
    for d in range(h.rank):
        pad = "    " * (d + 2)
        lines.append(f"{pad}for t_{d} in range(0, k_{d}):")
        inner = pad + "    "
        lines += [f"{inner}x_{d} = {x_prev} + t_{d} * sx{d}", f"{inner}w_{d} = {w_prev} + t_{d} * sw{d}"]
        lo, hi = h.pad_lo[d] > 0, h.pad_hi[d] > 0
        if lo or hi:
            reach = f"t_{d}" if h.dilation[d] == 1 else f"t_{d} * {h.dilation[d]}"
            checks = [f"(i_{d} >= 0)"] * lo + [f"(i_{d} < in_{d})"] * hi
            lines += [f"{inner}i_{d} = h_{d} + {reach}", f"{inner}ok_{d} = {ok_prev} & {' & '.join(checks)}"]
            ok_prev = f"ok_{d}"
        x_prev, w_prev = f"x_{d}", f"w_{d}"
    return lines, x_prev, ok_prev, w_prev


def kernel_source(plan: Plan) -> str:
    h = plan.hyper
    dims = range(h.rank)
    loops, x_last, ok_last, w_last = _loops(h)
    indent = "    " * (h.rank + 2)
    body = KERNEL.replace("\n        a = tl.load", "\n" + indent + "a = tl.load").replace(
        "\n        b = tl.load", "\n" + indent + "b = tl.load").replace(
        "\n        acc += a.to", "\n" + indent + "acc += a.to")
    return body.format(
        **header_fields(plan), rank=h.rank,
        rows="\n".join(unflatten("rm", [f"out_{d}" for d in dims], [f"o_{d}" for d in dims], "n", "    ")),
        hoisted="\n".join(hoisted_rows(h, group_base=False)), steps="\n".join(_steps(h)),
        loops="\n".join(loops), x_last=x_last, ok_last=ok_last, w_last=w_last, epilogue=epilogue_lines(plan),
        out_offsets=conv_offsets("o", h.rank), result=plan.result)
