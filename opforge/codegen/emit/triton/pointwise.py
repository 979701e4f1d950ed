"""The Triton emitter of a pointwise Plan (families/pointwise): one program per BLOCK output
elements, each input loaded through its broadcast strides (a constexpr fast path when every input is
contiguous and output-shaped), the fused chain in fp32, one store per output."""
from __future__ import annotations

from opforge.codegen.candidate import Kernel, model_new
from opforge.codegen.emit.triton.common import header
from opforge.codegen.emit.triton.exprs import EXPR
from opforge.codegen.families.pointwise.plan import MAX_RANK, Plan
from opforge.codegen.lower import Lowered, val

SPACE = ({"BLOCK": 1024, "num_warps": 4}, {"BLOCK": 2048, "num_warps": 8}, {"BLOCK": 512, "num_warps": 4},
         {"BLOCK": 4096, "num_warps": 8})


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    plan = Plan(lowered)
    exprs = [(op.var, EXPR[op.target](op.args, op.kwargs)) for op in plan.ops]
    leaves = plan.used
    name = f"_{title}_pointwise_kernel"

    def render(config: dict) -> str:
        return (header(f"Pointwise kernel for {title}", "pointwise", lowered)
                + "import math\n\n"
                + _kernel(name, plan, exprs, leaves, lowered)
                + _launcher(name, plan, leaves, lowered, config)
                + model_new(lowered, "launch", shapes))

    return Kernel("pointwise", SPACE, render)


def _kernel(name: str, plan: Plan, exprs: list, leaves: list[str], lowered: Lowered) -> str:
    lines = [f"@triton.jit\ndef {name}({', '.join(kernel_params(leaves, lowered))}, BLOCK: tl.constexpr, CONTIG: tl.constexpr):",
             "    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)"]
    lines += ["    " + line for line in block_body(plan, exprs, leaves, lowered)]
    return "\n\n" + "\n".join(lines) + "\n"


def kernel_params(leaves: list[str], lowered: Lowered) -> list[str]:
    """The kernel's pointers, element count, sizes and per-input strides (before its constexprs)."""
    ptrs = [f"in{i}_ptr" for i in range(len(leaves))] + [f"out{i}_ptr" for i in range(len(lowered.outputs))]
    strides = [f"st{i}_{d}" for i in range(len(leaves)) for d in range(MAX_RANK)]
    return ptrs + ["n"] + [f"S{d}" for d in range(1, MAX_RANK)] + strides


def block_body(plan: Plan, exprs: list, leaves: list[str], lowered: Lowered) -> list[str]:
    """One block of BLOCK outputs at `idx`: offsets, loads, the fused chain, stores (unindented; the
    Triton kernel runs it once per program, the Triton-Ascend one per block of its loop)."""
    lines = ["mask = idx < n",
             "if CONTIG:  # every input already has the output's shape and layout"]
    lines += [f"    off{i} = idx" for i in range(len(leaves))]
    lines += ["else:  # linear index -> coordinates -> per-input offsets (stride 0 along broadcast dims)",
              "    rest = idx"]
    for d in range(MAX_RANK - 1, 0, -1):
        lines += [f"    c{d} = rest % S{d}", f"    rest = rest // S{d}"]
    lines.append("    c0 = rest")
    for i in range(len(leaves)):
        lines.append(f"    off{i} = " + " + ".join(f"c{d} * st{i}_{d}" for d in range(MAX_RANK)))
    for i, leaf in enumerate(leaves):
        upcast = _upcast(plan.dtype(leaf))
        lines.append(f"{plan.names[leaf]} = tl.load(in{i}_ptr + off{i}, mask=mask){upcast}")
    lines.append("# the fused chain, in graph order")
    lines += [f"{var} = {expr}" for var, expr in exprs]
    for i, out in enumerate(lowered.outputs):
        lines.append(f"tl.store(out{i}_ptr + idx, {plan.names[out.name]}.to(out{i}_ptr.dtype.element_ty), mask=mask)")
    return lines


def _upcast(dtype) -> str:
    return ".to(tl.float32)" if dtype.is_floating_point and dtype.itemsize < 4 else ""


def _launcher(name: str, plan: Plan, leaves: list[str], lowered: Lowered, config: dict) -> str:
    block, warps = config["BLOCK"], config["num_warps"]
    comment = f"# BLOCK={block}, num_warps={warps}: one of the expert's tuning configurations (recorded with the version)."
    return launcher(name, plan, leaves, lowered, comment, f"(triton.cdiv(n, {block}),)",
                    f"BLOCK={block}, CONTIG=contig, num_warps={warps}")


def launcher(name: str, plan: Plan, leaves: list[str], lowered: Lowered, comment: str, grid: str,
             options: str) -> str:
    """`def launch(...)`: inputs viewed and broadcast, outputs allocated, kernel `name` launched on
    `grid` with its sizes and strides, then `options` (the backend's constexprs and launch options)."""
    args = [p.name for p in lowered.placeholders]
    out_types = [str(val(o).dtype) for o in lowered.outputs]
    views = "\n".join(f"    x{i} = {plan.leaves[leaf][1]}" for i, leaf in enumerate(leaves))
    xs = ", ".join(f"x{i}" for i in range(len(leaves)))
    outs = "\n".join(f"    out{i} = torch.empty(shape, dtype={t}, device=x0.device)" for i, t in enumerate(out_types))
    out_names = ", ".join(f"out{i}" for i in range(len(out_types)))
    result = out_names if len(out_types) > 1 else "out0"
    return f'''

{comment}
def launch({", ".join(args)}):
{views}
    leaves = [{xs}]
    shape = torch.broadcast_shapes(*(x.shape for x in leaves))
    if len(shape) > {MAX_RANK}:
        raise ValueError("pointwise kernel supports up to {MAX_RANK} dims")
{outs}
    n = math.prod(shape)
    if n == 0:
        return {result}
    dims = [1] * ({MAX_RANK} - len(shape)) + list(shape)
    strides = []
    for x in leaves:  # broadcast views: stride 0 where an input repeats
        view = x.expand(shape)
        strides += [0] * ({MAX_RANK} - len(shape)) + list(view.stride())
    contig = all(x.shape == shape and x.is_contiguous() for x in leaves)
    grid = {grid}
    {name}[grid]({xs}, {out_names}, n, *dims[1:], *strides, {options})
    return {result}
'''
