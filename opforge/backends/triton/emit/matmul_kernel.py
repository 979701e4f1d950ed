"""The Triton source of a matmul Plan: a tiled `tl.dot` kernel with grouped tile ordering, int64
offsets, masked ragged edges, and the epilogue applied to the fp32 accumulator before one store."""
from __future__ import annotations

import textwrap
from opforge.backends.triton.emit.exprs import lit
from opforge.codegen.families.matmul.plan import Plan


def offsets_of(prefix: str, batched: bool) -> str:
    batch = f"batch * stride_{prefix}b + " if batched else ""
    return f"{batch}rm64[:, None] * stride_{prefix}m + rn64[None, :] * stride_{prefix}n"


def strides_of(prefix: str, axes: str, batched: bool) -> list[str]:
    return [f"stride_{prefix}{a}" for a in ("b" if batched else "") + axes]


KERNEL = '''

@triton.jit
def {kernel}(
    a_ptr, b_ptr, out_ptr,{leaf_ptrs} M, N, K,
{strides}
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    # Grouped ordering: GROUP_M row tiles sweep the columns together, so B tiles are reused from L2.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group_size = GROUP_M * num_pid_n
    first_m = (pid // group_size) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size) % group_m
    pid_n = (pid % group_size) // group_m
{batch}
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rm64, rn64 = rm.to(tl.int64), rn.to(tl.int64)  # offsets: row * stride passes 2**31 on large operands
    a_ptrs = a_ptr + {a_batch}rm64[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + {b_batch}rk[:, None] * stride_bk + rn64[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        # Zero padding on ragged edges contributes nothing to the dot product.
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
{dot}
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    mask = (rm[:, None] < M) & (rn[None, :] < N)
{epilogue}
    out_ptrs = out_ptr + {out_offsets}
    tl.store(out_ptrs, {result}.to(out_ptr.dtype.element_ty), mask=mask)
'''
IEEE_DOT = '''\
        # "ieee": true fp32 products; the reduced-mantissa tensor-core default would break the fp32 contract.
        acc = tl.dot(a, b, acc, input_precision="ieee")'''
HALF_DOT = "        acc = tl.dot(a, b, acc)  # half-precision inputs, fp32 accumulation"
INT8_DOT = '''\
        # int8 x int8: an exact int32 dot per K tile, summed in fp32 like the reference's fp32 sums
        # (per tile, so no int32 accumulator can overflow however long K is); "ieee" names the contract,
        # integer products have no reduced-precision mode.
        acc += tl.dot(a, b, out_dtype=tl.int32, input_precision="ieee").to(tl.float32)'''
FP8_DOT = '''\
        # FP8 operands widened to bf16 (exact: fewer mantissa bits, a narrower exponent range), then a
        # bf16 dot with fp32 accumulation: the products are exact, as in the reference's fp32 dot.
        acc = tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16), acc)'''
TL_DTYPES = {"torch.float32": "tl.float32", "torch.float16": "tl.float16", "torch.bfloat16": "tl.bfloat16"}


def dot_source(plan: Plan) -> str:
    """The K loop's dot, after the operands' own casts (a cast operand is converted as loaded)."""
    if plan.dot == "int8":
        return INT8_DOT
    if plan.dot == "fp8":
        return FP8_DOT
    lines = [f"        {side} = {side}.to({TL_DTYPES[str(cast[1])]})  # the reference's {cast[0]} -> {cast[1]}"
             for side, cast in zip("ab", plan.casts) if cast]
    return "\n".join(lines + [IEEE_DOT if plan.ieee else HALF_DOT])


def fill(items: list[str], indent: str) -> str:
    return textwrap.fill(", ".join(items), 100, initial_indent=indent, subsequent_indent=indent)


def kernel_source(plan: Plan) -> str:
    b, epi = plan.batched, plan.epilogue
    strides = strides_of("a", "mk", b) + strides_of("b", "kn", b) + strides_of("o", "mn", b)
    strides += [s for leaf in epi.leaves for s in strides_of(leaf.name, "mn", b)]
    body = [f"acc = acc {op} {lit(x)}  # an operand's scalar {op}, moved past the (linear) dot" for op, x in plan.scale]
    body += epi.lines
    fused = ", ".join(dict.fromkeys(epi.fused))
    comment = (f"# Epilogue on the fp32 accumulator, before the one store; fuses: {fused or 'scaling'}." if body
               else "# No epilogue: the accumulator is stored as it is.")
    return KERNEL.format(
        kernel=plan.kernel, leaf_ptrs="".join(f" {leaf.name}_ptr," for leaf in epi.leaves),
        strides=fill(strides, "    ") + ",",
        batch="    batch = tl.program_id(1).to(tl.int64)  # int64: batch * stride passes 2**31\n" if b else "",
        a_batch="batch * stride_ab + " if b else "", b_batch="batch * stride_bb + " if b else "",
        dot=dot_source(plan),
        epilogue="\n".join("    " + line for line in [comment] + body),
        out_offsets=offsets_of("o", b), result=plan.result)
