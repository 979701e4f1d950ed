"""The Triton source of a conv Plan: an implicit-GEMM kernel written for the graph's spatial rank.
Each program owns BLOCK_M output positions (sample and position, row-major) by BLOCK_N output
channels of one group; every K step gathers a [BLOCK_M, BLOCK_K] input tile straight from the
(position, tap) indices, masked where a tap falls in the padding, and multiplies it with the
matching [BLOCK_K, BLOCK_N] weight tile on `tl.dot` into an fp32 accumulator; bias and epilogue are
applied to the accumulator before one store."""
from __future__ import annotations

from opforge.backends.triton.emit.conv_epilogue import conv_offsets
from opforge.backends.triton.emit.matmul_kernel import HALF_DOT, IEEE_DOT, fill
from opforge.codegen.families.conv.plan import Hyper, Plan

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
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # Row -> (sample, output position), the output's row-major order.
{rows}
    n = q.to(tl.int64)  # int64: sample * stride passes 2**31 on large batches
    co = (g * cout_g + rn).to(tl.int64)
    m_ok = rm < M
    n_ok = rn < cout_g
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        k_ok = rk < K
        # Column -> (input channel of the group, tap).
{taps}
        ci = (g * cin_g + r).to(tl.int64)
{gather}
        a = tl.load(x_ptr + {x_offsets}, mask=a_ok, other=0.0)
        b = tl.load(w_ptr + {w_offsets}, mask=k_ok[:, None] & n_ok[None, :], other=0.0)
{dot}
    mask = m_ok[:, None] & n_ok[None, :]
{epilogue}
    tl.store(out_ptr + {out_offsets}, {result}.to(out_ptr.dtype.element_ty), mask=mask)
'''


def _unflatten(flat: str, sizes: list[str], names: list[str], rest: str, indent: str) -> list[str]:
    """Statements splitting index `flat` into `names` (last varies fastest) over `sizes`; the
    quotient left over is `rest`."""
    lines, current = [], flat
    for size, name in reversed(list(zip(sizes, names))):
        lines += [f"{name} = {current} % {size}", f"{rest} = {current} // {size}"]
        current = rest
    return [indent + line for line in lines]


def _term(value: str, factor: int, sign: str = "*") -> str:
    return value if factor == 1 else f"{value} {sign} {factor}"


def _gather(h: Hyper) -> list[str]:
    """Each spatial dim's input index i_d for (row, column) and whether it lands inside the input."""
    lines, oks = [], ["m_ok[:, None]", "k_ok[None, :]"]
    for d in range(h.rank):
        s, lo, dil = h.stride[d], h.pad_lo[d], h.dilation[d]
        tap = _term(f"t_{d}[None, :]", dil)
        if not h.transposed:
            shift = f" - {lo}" if lo else ""
            lines.append(f"i_{d} = {_term(f'o_{d}[:, None]', s)}{shift} + {tap}")
            oks.append(f"(i_{d} >= 0) & (i_{d} < in_{d})")
            continue
        shift = f" + {lo}" if lo else ""
        lines.append(f"u_{d} = o_{d}[:, None]{shift} - {tap}  # = i * stride where a tap lands on an input")
        if s == 1:
            lines.append(f"i_{d} = u_{d}")
            oks.append(f"(i_{d} >= 0) & (i_{d} < in_{d})")
        else:  # clamped before // and %: no negative division, whatever the hardware's rounding
            lines += [f"v_{d} = tl.where(u_{d} >= 0, u_{d}, 0)", f"i_{d} = v_{d} // {s}"]
            oks.append(f"(u_{d} >= 0) & (v_{d} % {s} == 0) & (i_{d} < in_{d})")
    lines.append(f"a_ok = {' & '.join(oks)}")
    return ["        " + line for line in lines]


def kernel_source(plan: Plan) -> str:
    h, epi = plan.hyper, plan.epilogue
    dims = range(h.rank)
    pointers = ["x_ptr", "w_ptr"] + (["b_ptr"] if plan.bias else []) + ["out_ptr"]
    pointers += [f"{leaf.name}_ptr" for leaf in epi.leaves]
    sizes = ["batch", "c_in"] + [f"in_{d}" for d in dims] + [f"out_{d}" for d in dims]
    sizes += [f"k_{d}" for d in dims] + ["cout_g", "groups"]
    axes = ["n", "c"] + [str(d) for d in dims]
    strides = [f"stride_{p}{a}" for p in ("x", "w", "o") + tuple(leaf.name for leaf in epi.leaves) for a in axes]
    x_offsets = "n[:, None] * stride_xn + ci[None, :] * stride_xc" + "".join(
        f" + i_{d} * stride_x{d}" for d in dims)
    w_spatial = "".join(f" + t_{d}[:, None] * stride_w{d}" for d in dims)
    w_offsets = ("ci[:, None] * stride_wn + rn[None, :] * stride_wc" if h.transposed
                 else "co[None, :] * stride_wn + r[:, None] * stride_wc") + w_spatial
    body = ([f"acc += tl.load(b_ptr + co, mask=n_ok, other=0.0).to(tl.float32)[None, :]  # bias"]
            if plan.bias else [])
    body += epi.lines
    fused = ", ".join(dict.fromkeys(epi.fused))
    comment = (f"# Bias and epilogue on the fp32 accumulator, before the one store; fuses: {fused or 'bias'}."
               if body else "# No epilogue: the accumulator is stored as it is.")
    what = "Transposed convolution, as a gather" if h.transposed else "Convolution"
    return KERNEL.format(
        kernel=plan.kernel, pointers=fill(pointers, "    ") + ",", sizes=fill(sizes, "    ") + ",",
        strides=fill(strides, "    ") + ",", what=f"{what} over {h.rank} spatial dim(s) as an implicit GEMM;",
        stride=list(h.stride), pad_lo=list(h.pad_lo), pad_hi=list(h.pad_hi), dilation=list(h.dilation),
        output_padding=f", output padding {list(h.output_padding)}" if h.transposed else "", groups=h.groups,
        out_count=" * ".join(f"out_{d}" for d in dims), tap_count=" * ".join(f"k_{d}" for d in dims),
        rows="\n".join(_unflatten("rm", [f"out_{d}" for d in dims], [f"o_{d}" for d in dims], "q", "    ")),
        taps="\n".join(_unflatten("rk", [f"k_{d}" for d in dims], [f"t_{d}" for d in dims], "r", "        ")),
        gather="\n".join(_gather(h)), x_offsets=x_offsets, w_offsets=w_offsets,
        dot=IEEE_DOT if plan.ieee else HALF_DOT,
        epilogue="\n".join("    " + line for line in [comment] + body),
        out_offsets=conv_offsets("o", h.rank), result=plan.result)
