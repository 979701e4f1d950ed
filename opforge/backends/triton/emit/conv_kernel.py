"""The Triton source of a conv Plan: an implicit-GEMM kernel written for the graph's spatial rank.
Each program owns BLOCK_M output positions (sample and position, row-major) by BLOCK_N output
channels of one group; every K step gathers a [BLOCK_M, BLOCK_K] input tile straight from the
(position, tap) indices and multiplies it with the matching [BLOCK_K, BLOCK_N] weight tile on
`tl.dot` into an fp32 accumulator; bias and epilogue are applied to the accumulator before one store.

Written to be cheap under Triton's CPU interpreter, which pays per program and per tile op (each a
numpy call, and each int32 add/sub/mul on a tile followed by its overflow check): index arithmetic
is int64 (no checks, and no 2**31 wrap on large tensors), and a forward convolution's gather offset
splits into a per-row part (sample, first tap's position; hoisted out of the K loop) plus a per-column
part (channel, tap; [BLOCK_K] vectors), so a K step costs a few [BLOCK_M, BLOCK_K] ops, plus a bounds
check only on the sides that are padded (with no padding on a side, the output size formula keeps
every tap inside the input there), as a comparison of the tap's reach with per-row limits.

A transposed convolution is launched once per stride phase (conv.py's launcher): the outputs
o = q * stride + r of one residue r per dim are a plain convolution over the input with the
sub-kernel of the taps that land there (k * dilation = r + padding mod stride: every
stride / gcd(stride, dilation)-th tap from the phase's first one, k0), input index
i = q + base - j * (dilation / gcd), base = (r + padding - k0 * dilation) / stride. So no (row, tap)
pair is masked for falling between inputs (a gather over every tap masked all but 1 / stride**dims
of them), and the gather is the forward one: per-row offsets hoisted, [BLOCK_K] tap offsets."""
from __future__ import annotations

import math

from opforge.backends.triton.emit.conv_epilogue import conv_offsets
from opforge.backends.triton.emit.matmul_kernel import HALF_DOT, IEEE_DOT, fill
from opforge.codegen.families.conv.plan import Hyper, Plan

# A transposed launch's phase, per dim d: outputs of the phase (cnt), its first tap (k0), its taps,
# the input its first tap reads for q = 0 (base) and the residue (res): the outputs are o = q * stride + res.
PHASE_ARGS = ("cnt", "k0", "taps", "base", "res")

KERNEL = '''

@triton.jit
def {kernel}(
{pointers}
{sizes}
{strides}
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # {what}
    # stride {stride}, padding {pad_lo} low / {pad_hi} high, dilation {dilation}{output_padding}; {groups} group(s) at export.
    # One program per (BLOCK_M output positions, BLOCK_N output channels of group g).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    g = tl.program_id(2)
    cin_g = c_in // groups
    M = batch * {out_count}
    K = cin_g * {tap_count}  # (input channel of the group, tap) pairs, in the weight's order
    # int64 indices: offsets pass 2**31 on large tensors (and the interpreter checks int32 arithmetic).
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(tl.int64)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Row -> (sample, output position), the output's row-major order.
{rows}
    co = (g * cout_g + rn).to(tl.int64)
    m_ok = rm < M
    n_ok = rn < cout_g
{hoisted}
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K).to(tl.int64)
        k_ok = rk < K
        # Column -> (input channel of the group, tap).
{taps}
{gather}
        a = tl.load(x_ptr + {x_offsets}, mask=a_ok, other=0.0)
        b = tl.load(w_ptr + (w_k[:, None] + w_n[None, :]), mask=k_ok[:, None] & n_ok[None, :], other=0.0)
{dot}
    mask = m_ok[:, None] & n_ok[None, :]
{epilogue}
    tl.store(out_ptr + {out_offsets}, {result}.to(out_ptr.dtype.element_ty), mask=mask)
'''


def unflatten(flat: str, sizes: list[str], names: list[str], rest: str, indent: str) -> list[str]:
    """Statements splitting index `flat` into `names` (last varies fastest) over `sizes`; the
    quotient left over is `rest`."""
    lines, current = [], flat
    for size, name in reversed(list(zip(sizes, names))):
        lines += [f"{name} = {current} % {size}", f"{rest} = {current} // {size}"]
        current = rest
    return [indent + line for line in lines]


def _term(value: str, factor: int, sign: str = "*") -> str:
    return value if factor == 1 else f"{value} {sign} {factor}"


def _signed(value: int) -> str:
    return f" + {value}" if value > 0 else f" - {-value}" if value < 0 else ""


def hoisted_rows(h: Hyper, group_base: bool = True, bounds: bool = False) -> list[str]:
    """Per-row parts of the input offsets, computed once per program: a forward convolution's first
    tap in input coordinates h_d and the row's offset x_m there; a transposed one's sample offset x_m
    (its input position depends on the tap). `group_base`: x_m starts at group g's first channel.
    `bounds`: the reach a tap may have on each padded side, lo_d <= reach < hi_d (a tap's reach e_d
    is compared with them, so no [BLOCK_M, BLOCK_K] index tile is built)."""
    base = " + (g * cin_g).to(tl.int64) * stride_xc" if group_base else ""
    lines = ["# Each row's first tap, in input coordinates, and the row's offset there."]
    if h.transposed:  # the phase's first tap lands on input q + b
        lines += [f"h_{d} = q_{d} + base_{d}" for d in range(h.rank)]
    else:
        lines += [f"h_{d} = {_term(f'o_{d}', h.stride[d])}{_signed(-h.pad_lo[d])}" for d in range(h.rank)]
    lines.append(f"x_m = n * stride_xn{base}" + "".join(f" + h_{d} * stride_x{d}" for d in range(h.rank)))
    for d in range(h.rank) if bounds else ():  # a phase's taps may leave the input on either side
        lines += [f"lo_{d} = -h_{d}"] * (h.pad_lo[d] > 0 or h.transposed)
        lines += [f"hi_{d} = in_{d} - h_{d}"] * (h.pad_hi[d] > 0 or h.transposed)
    return ["    " + line for line in lines]


def _gather(h: Hyper) -> list[str]:
    """The K step's input offsets x_k (the column's offset from the row's first tap) and mask a_ok;
    a transposed phase's tap j reaches j * (dilation / gcd(stride, dilation)) inputs back."""
    oks = ["m_ok[:, None] & k_ok[None, :]"]
    lines = []
    for d in range(h.rank):
        if h.transposed:
            back = h.dilation[d] // math.gcd(h.stride[d], h.dilation[d])
            lines.append(f"e_{d} = {_term(f'-j_{d}', back)}  # the tap's reach along dim {d}, back from the first")
        else:
            lines.append(f"e_{d} = {_term(f't_{d}', h.dilation[d])}  # the tap's reach along dim {d}")
    lines.append("x_k = r * sxc" + "".join(f" + e_{d} * sx{d}" for d in range(h.rank)))
    for d in range(h.rank):  # a side with no padding never leaves the input (a forward convolution)
        oks += [f"(e_{d}[None, :] >= lo_{d}[:, None])"] * (h.pad_lo[d] > 0 or h.transposed)
        oks += [f"(e_{d}[None, :] < hi_{d}[:, None])"] * (h.pad_hi[d] > 0 or h.transposed)
    return ["        " + line for line in lines + [f"a_ok = {' & '.join(oks)}"]]


def header_fields(plan: Plan) -> dict:
    """The kernel's name, parameter lists and the comment fields both conv kernels share."""
    h, epi = plan.hyper, plan.epilogue
    dims = range(h.rank)
    pointers = ["x_ptr", "w_ptr"] + (["b_ptr"] if plan.bias else []) + ["out_ptr"]
    pointers += [f"{leaf.name}_ptr" for leaf in epi.leaves]
    sizes = ["batch", "c_in"] + [f"in_{d}" for d in dims] + [f"out_{d}" for d in dims]
    sizes += [f"k_{d}" for d in dims] + ["cout_g", "groups"]
    if h.transposed:  # the stride phase this launch computes (conv.py's launcher), per dim
        sizes += [f"{v}_{d}" for d in dims for v in PHASE_ARGS]
    axes = ["n", "c"] + [str(d) for d in dims]
    strides = [f"stride_{p}{a}" for p in ("x", "w", "o") + tuple(leaf.name for leaf in epi.leaves) for a in axes]
    return dict(kernel=plan.kernel, pointers=fill(pointers, "    ") + ",", sizes=fill(sizes, "    ") + ",",
                strides=fill(strides, "    ") + ",", stride=list(h.stride), pad_lo=list(h.pad_lo),
                pad_hi=list(h.pad_hi), dilation=list(h.dilation), groups=h.groups,
                out_count=" * ".join(f"{'cnt' if h.transposed else 'out'}_{d}" for d in dims),
                tap_count=" * ".join(f"{'taps' if h.transposed else 'k'}_{d}" for d in dims))


def epilogue_lines(plan: Plan) -> str:
    """Bias and the fused epilogue on the fp32 accumulator `acc` (output channel `co`), indented."""
    epi = plan.epilogue
    body = ([f"acc += tl.load(b_ptr + co, mask=n_ok, other=0.0).to(tl.float32)[None, :]  # bias"]
            if plan.bias else [])
    body += epi.lines
    fused = ", ".join(dict.fromkeys(epi.fused))
    comment = (f"# Bias and epilogue on the fp32 accumulator, before the one store; fuses: {fused or 'bias'}."
               if body else "# No epilogue: the accumulator is stored as it is.")
    return "\n".join("    " + line for line in [comment] + body)


def _taps(h: Hyper) -> list[str]:
    """Column -> (input channel of the group r, tap t_d): a transposed phase's j-th tap along dim d is
    k0_d + j * stride / gcd(stride, dilation)."""
    dims = range(h.rank)
    if not h.transposed:
        return unflatten("rk", [f"k_{d}" for d in dims], [f"t_{d}" for d in dims], "r", "        ")
    lines = unflatten("rk", [f"taps_{d}" for d in dims], [f"j_{d}" for d in dims], "r", "        ")
    steps = [h.stride[d] // math.gcd(h.stride[d], h.dilation[d]) for d in dims]
    return lines + [f"        t_{d} = k0_{d} + {_term(f'j_{d}', steps[d])}" for d in dims]


def _rows(h: Hyper) -> list[str]:
    """Row -> (sample n, output position o_d); a transposed phase's rows are its outputs q * stride + r."""
    dims = range(h.rank)
    if not h.transposed:
        return unflatten("rm", [f"out_{d}" for d in dims], [f"o_{d}" for d in dims], "n", "    ")
    lines = unflatten("rm", [f"cnt_{d}" for d in dims], [f"q_{d}" for d in dims], "n", "    ")
    return lines + [f"    o_{d} = {_term(f'q_{d}', h.stride[d])} + res_{d}" for d in dims]


def kernel_source(plan: Plan) -> str:
    h = plan.hyper
    dims = range(h.rank)
    w_k = "w_k = r * swk" + "".join(f" + t_{d} * sw{d}" for d in dims)
    # A transposed weight is [C_in, C_out / groups, ...]: group g's rows, the group's own columns.
    w_n = ("    w_n = rn.to(tl.int64) * stride_wc + (g * cin_g).to(tl.int64) * stride_wn" if h.transposed
           else "    w_n = co * stride_wn")
    # The strides a K step multiplies by, cast once (an int32 scalar is cast again at every use).
    casts = [("sxc", "stride_xc"), ("swk", "stride_wn" if h.transposed else "stride_wc")]
    casts += [(f"s{t}{d}", f"stride_{t}{d}") for d in dims for t in ("x", "w")]
    w_n += "".join(f"\n    {a} = tl.cast({b}, tl.int64)" for a, b in casts)
    what = ("Transposed convolution, one stride phase: a convolution with the phase's taps" if h.transposed
            else "Convolution")
    return KERNEL.format(
        **header_fields(plan), what=f"{what} over {h.rank} spatial dim(s) as an implicit GEMM;",
        output_padding=f", output padding {list(h.output_padding)}" if h.transposed else "",
        rows="\n".join(_rows(h)),
        hoisted="\n".join(["    # Column offsets of the weight tile: output channel co's filter.", w_n]
                          + hoisted_rows(h, bounds=True)),
        taps="\n".join(_taps(h) + ["        " + w_k]), gather="\n".join(_gather(h)),
        x_offsets="(x_m[:, None] + x_k[None, :])",
        dot=IEEE_DOT if plan.ieee else HALF_DOT, epilogue=epilogue_lines(plan),
        out_offsets=conv_offsets("o", h.rank), result=plan.result)
