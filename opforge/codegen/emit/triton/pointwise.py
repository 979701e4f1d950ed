"""The Triton emitter of a pointwise Plan (families/pointwise): one program per BLOCK output
elements, each input loaded through its broadcast strides (a constexpr fast path when every input is
contiguous and output-shaped), the fused chain in fp32, one store per output."""
from __future__ import annotations

from opforge.codegen.candidate import Kernel, model_new
from opforge.codegen.emit.triton.common import header
from opforge.codegen.emit.triton.exprs import EXPR, lit
from opforge.codegen.families.pointwise.plan import MAX_RANK, Plan
from opforge.codegen.lower import Lowered, val

SPACE = ({"BLOCK": 1024, "num_warps": 4}, {"BLOCK": 2048, "num_warps": 8}, {"BLOCK": 512, "num_warps": 4},
         {"BLOCK": 4096, "num_warps": 8})


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    plan = Plan(lowered, index_maps=True)
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
    lines = [f"@triton.jit\ndef {name}({', '.join(kernel_params(plan))}, BLOCK: tl.constexpr, CONTIG: tl.constexpr):",
             "    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)"]
    lines += ["    " + line for line in block_body(plan, exprs, leaves, lowered)]
    return "\n\n" + "\n".join(lines) + "\n"


def kernel_params(plan: Plan) -> list[str]:
    """The kernel's pointers, element count, sizes and per-input strides (before its constexprs),
    then the index-mapped region's: its inputs' sizes and strides, and its nodes' sizes."""
    leaves, region = plan.used, plan.region
    gathered = [f"g{j}_ptr" for j in range(len(region.leaves))] if region else []
    ptrs = [f"in{i}_ptr" for i in range(len(leaves))] + gathered + [f"out{i}_ptr" for i in range(len(plan.outputs))]
    strides = [f"st{i}_{d}" for i in range(len(leaves)) for d in range(MAX_RANK)]
    return ptrs + ["n"] + [f"S{d}" for d in range(1, MAX_RANK)] + strides + region_params(plan)


def region_params(plan: Plan) -> list[str]:
    """Sizes and strides of the region's inputs (gz, gs), sizes of its nodes (z), in that order."""
    region = plan.region
    if not region:
        return []
    out = []
    for j, leaf in enumerate(region.leaves):
        rank = region.rank[leaf]
        out += [f"gz{j}_{d}" for d in range(rank)] + [f"gs{j}_{d}" for d in range(rank)]
    return out + [f"z{k}_{d}" for k, node in enumerate(region.nodes) for d in range(region.rank[node])]


def block_body(plan: Plan, exprs: list, leaves: list[str], lowered: Lowered) -> list[str]:
    """One block of BLOCK outputs at `idx`: offsets, loads, the fused chain, stores (unindented; the
    Triton kernel runs it once per program, the Triton-Ascend one per block of its loop). Index maps
    need the coordinates on either path."""
    coords = ["rest = idx"]
    for d in range(MAX_RANK - 1, 0, -1):
        coords += [f"c{d} = rest % S{d}", f"rest = rest // S{d}"]
    coords.append("c0 = rest")
    lines = ["mask = idx < n"] + (coords if plan.region else [])
    if leaves:
        lines.append("if CONTIG:  # every input already has the output's shape and layout")
        lines += [f"    off{i} = idx" for i in range(len(leaves))]
        lines.append("else:  # linear index -> coordinates -> per-input offsets (stride 0 along broadcast dims)")
        lines += [] if plan.region else ["    " + line for line in coords]
        for i in range(len(leaves)):
            lines.append(f"    off{i} = " + " + ".join(f"c{d} * st{i}_{d}" for d in range(MAX_RANK)))
    for i, leaf in enumerate(leaves):
        upcast = _upcast(plan.dtype(leaf))
        lines.append(f"{plan.names[leaf]} = tl.load(in{i}_ptr + off{i}, mask=mask){upcast}")
    if plan.region:
        lines.append("# index maps: each value read from its sources' coordinates")
        lines += [f"{name} = {render(expr, plan)}" for name, expr in plan.region.statements]
    lines.append("# the fused chain, in graph order")
    lines += [f"{var} = {expr}" for var, expr in exprs]
    for i, out in enumerate(lowered.outputs):
        lines.append(f"tl.store(out{i}_ptr + idx, {plan.names[out.name]}.to(out{i}_ptr.dtype.element_ty), mask=mask)")
    return lines


def render(expr, plan: Plan) -> str:
    """A region statement's expression (families/pointwise/indexmap.py) in Triton."""
    if not isinstance(expr, tuple):
        return lit(expr) if isinstance(expr, (int, float)) else str(expr)
    kind, *a = expr
    if kind == "bin":
        return f"({render(a[1], plan)} {a[0]} {render(a[2], plan)})"
    if kind == "load":
        leaf = plan.region.leaves[a[0]]
        return f"tl.load(g{a[0]}_ptr + {render(a[1], plan)}, mask={a[2]}, other=0){_upcast(plan.dtype(leaf.name))}"
    args = ", ".join(render(x, plan) for x in a)
    return {"where": "tl.where({})", "min": "tl.minimum({})", "max": "tl.maximum({})",
            "f32": "({}).to(tl.float32)", "i64": "({}).to(tl.int64)"}[kind].format(args)


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
    region, roots, pointers, extra = region_launch(plan)
    views = "\n".join(filter(None, [views, region]))
    device = "x0" if leaves else "g0"
    outs = "\n".join(f"    out{i} = torch.empty(shape, dtype={t}, device={device}.device)" for i, t in enumerate(out_types))
    out_names = ", ".join(f"out{i}" for i in range(len(out_types)))
    result = out_names if len(out_types) > 1 else "out0"
    return f'''

{comment}
def launch({", ".join(args)}):
{views}
    leaves = [{xs}]
    shape = torch.broadcast_shapes(*(x.shape for x in leaves){roots})
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
    {name}[grid]({", ".join(filter(None, [xs, pointers, out_names]))}, n, *dims[1:], *strides{extra}, {options})
    return {result}
'''


def region_launch(plan: Plan, contiguous: bool = False) -> tuple[str, str, str, str]:
    """The launcher's part for index maps: (lines viewing the region's inputs, checking their ranks
    and computing every node's shape; the roots' shapes for the broadcast; the inputs' names; the
    kernel's size and stride arguments, as region_params orders them). `contiguous`: the inputs are
    copied contiguous (the CUDA launcher contract), else read through their strides."""
    region = plan.region
    if not region:
        return "", "", "", ""
    lines, extra = [], []
    for j, leaf in enumerate(region.leaves):
        rank = region.rank[leaf]
        lines += [f"    g{j} = {plan.leaves[leaf.name][1]}{'.contiguous()' if contiguous else ''}",
                  f"    if g{j}.dim() != {rank}:",
                  f"        raise ValueError(f\"index-mapped input {j} has {{g{j}.dim()}} dims; this kernel was built for {rank}\")"]
        extra += [f"*g{j}.shape", f"*g{j}.stride()"]
    lines += [f"    {name} = {code}" for name, code in region.shapes()]
    extra += [f"*z{k}" for k, node in enumerate(region.nodes) if region.rank[node]]
    roots = "".join(f", z{region.nodes.index(r)}" for r in region.roots)
    pointers = ", ".join(f"g{j}" for j in range(len(region.leaves)))
    return "\n".join(lines), roots, pointers, "".join(f", {e}" for e in extra)
