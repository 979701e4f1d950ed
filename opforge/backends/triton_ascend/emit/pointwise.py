"""The Triton-Ascend emitter of a pointwise Plan: the Triton kernel's block (offsets through
broadcast strides with a constexpr fast path, the fused chain in fp32, the stores) run inside a loop
over blocks, `for blk in tl.range(pid, n_blocks, NUM_CORES)`, on a grid of at most NUM_CORES
programs; BLOCK from the unified-buffer rule (common.py), no num_warps."""
from __future__ import annotations

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.triton.emit.exprs import DIVIDED_FMOD, EXPR
from opforge.backends.triton.emit.pointwise import block_body, kernel_params, launcher
from opforge.backends.triton_ascend.emit.common import blocks, header, value_bytes
from opforge.codegen.families.pointwise.plan import MAX_RANK, Plan
from opforge.codegen.lower import Lowered, val

# Per element, whatever the chain: the int64 index and its mask; on the strided path the running
# remainder, one coordinate and each input's offset, live until the loads.
INDEX_BYTES, STRIDED_BYTES, OFFSET_BYTES = 8 + 1, 2 * 8, 8


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    plan = Plan(lowered, index_maps=True)
    exprs = [(op.var, _formatter(op)(op.args, op.kwargs)) for op in plan.ops]
    leaves = plan.used
    name = f"_{title}_pointwise_kernel"
    space = tuple({"BLOCK": b} for b in blocks(tile_bytes(plan, leaves), f"the pointwise chain of {title}"))

    def render(config: dict) -> str:
        return (header(f"Pointwise kernel for {title} (Triton-Ascend)", "pointwise", lowered)
                + _kernel(name, plan, exprs, leaves, lowered)
                + _launcher(name, plan, leaves, lowered, config)
                + model_new(lowered, "launch", shapes))

    return Kernel("pointwise", space, render)


def _formatter(op):
    """Triton's formatter, but fmod/remainder of floats by division: no float % on Triton-Ascend."""
    if op.target in DIVIDED_FMOD and val(op.node).dtype.is_floating_point:
        return DIVIDED_FMOD[op.target]
    return EXPR[op.target]


def tile_bytes(plan: Plan, leaves: list[str]) -> int:
    """Live bytes per element of one block at its peak: index and offsets, the loaded inputs, and the
    chain's values still to be used when each op writes its result."""
    last_use: dict[str, int] = {str(plan.names[o.name]): len(plan.ops) for o in plan.outputs}
    for i, op in enumerate(plan.ops):
        for a in op.args:
            last_use[str(a)] = max(last_use.get(str(a), -1), i)
    size = {str(plan.names[leaf]): value_bytes(plan.dtype(leaf)) for leaf in leaves}
    peak = sum(size.values())
    for i, op in enumerate(plan.ops):
        size[str(op.var)] = value_bytes(val(op.node).dtype)
        peak = max(peak, sum(b for v, b in size.items() if last_use.get(v, -1) >= i or v == str(op.var)))
    # index maps: the coordinates, then at most every statement's value (8 bytes, int64 or wider) live
    region = 8 * (MAX_RANK + len(plan.region.statements)) if plan.region else 0
    return INDEX_BYTES + STRIDED_BYTES + OFFSET_BYTES * len(leaves) + peak + region


def _kernel(name: str, plan: Plan, exprs: list, leaves: list[str], lowered: Lowered) -> str:
    params = kernel_params(plan) + ["BLOCK: tl.constexpr", "CONTIG: tl.constexpr", "NUM_CORES: tl.constexpr"]
    lines = [f"@triton.jit\ndef {name}({', '.join(params)}):",
             "    # a program per vector core, each taking every NUM_CORES-th block of BLOCK outputs",
             "    for blk in tl.range(tl.program_id(0), tl.cdiv(n, BLOCK), NUM_CORES):",
             "        idx = tl.cast(blk, tl.int64) * BLOCK + tl.arange(0, BLOCK)"]
    lines += ["        " + line for line in block_body(plan, exprs, leaves, lowered)]
    return "\n\n" + "\n".join(lines) + "\n"


def _launcher(name: str, plan: Plan, leaves: list[str], lowered: Lowered, config: dict) -> str:
    block = config["BLOCK"]
    comment = (f"# BLOCK={block}: one of the expert's tuning configurations (recorded with the version), "
               "within the unified-buffer rule.")
    return launcher(name, plan, leaves, lowered, comment, f"(min(NUM_CORES, triton.cdiv(n, {block})),)",
                    f"BLOCK={block}, CONTIG=contig, NUM_CORES=NUM_CORES")
