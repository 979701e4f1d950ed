"""The Triton emitter of a pointwise Plan (families/pointwise): one program per BLOCK output
elements, each input loaded through its broadcast strides (a constexpr fast path when every input is
contiguous and output-shaped), the fused chain in fp32, one store per output. A mapped plan (q and k
of a rotary embedding) is one kernel too: its programs are split into one run of blocks per output,
each computing its output's elements from their coordinates (`_sections_kernel`)."""
from __future__ import annotations

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.triton.emit.common import header
from opforge.backends.triton.emit.exprs import EXPR, lit
from opforge.backends.triton.emit.sort_common import ROUND_BF16, elementwise
from opforge.codegen.emit.pointwise import prologue, region_launch, region_params
from opforge.codegen.exprs import Var
from opforge.codegen.families.pointwise.plan import MAX_RANK, Plan
from opforge.codegen.lower import Lowered, val

SPACE = ({"BLOCK": 1024, "num_warps": 4}, {"BLOCK": 2048, "num_warps": 8}, {"BLOCK": 512, "num_warps": 4},
         {"BLOCK": 4096, "num_warps": 8})


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    plan = Plan(lowered, index_maps=True, sections=True)
    exprs = [(op.var, EXPR[op.target](op.args, op.kwargs)) for op in plan.ops]
    leaves = plan.used
    name = f"_{title}_pointwise_kernel"
    if plan.sections is not None:
        _sections_kernel(name, plan)  # an op no formatter has is refused here, not when rendering

        def render_sections(config: dict) -> str:
            kernel = _sections_kernel(name, plan)
            helper = ROUND_BF16.format(name=f"{name}_round_bf16") if f"{name}_round_bf16(" in kernel else ""
            return (header(f"Pointwise kernel for {title}", "pointwise", lowered) + "import math\n\n"
                    + helper + kernel + _sections_launcher(name, plan, lowered, config)
                    + model_new(lowered, "launch", shapes))

        return Kernel("pointwise", SPACE, render_sections)

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


def render(expr, plan: Plan, round_bf16: str = "_round_bf16") -> str:
    """A region statement's expression (families/pointwise/indexmap.py) in Triton; an elementwise op
    of a mapped plan rounded to its node's dtype (fp16, bf16 by the helper named `round_bf16`)."""
    if not isinstance(expr, tuple):
        return lit(expr) if isinstance(expr, (int, float)) else str(expr)
    kind, *a = expr
    if kind == "bin":
        return f"({render(a[1], plan)} {a[0]} {render(a[2], plan)})"
    if kind == "op":
        return "(" + elementwise(a[4], [Var(x) if isinstance(x, str) else x for x in a[1]], a[2], round_bf16) + ")"
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
    xs = ", ".join(f"x{i}" for i in range(len(leaves)))
    region, roots, pointers, extra = region_launch(plan)
    out_names = ", ".join(f"out{i}" for i in range(len(out_types)))
    result = out_names if len(out_types) > 1 else "out0"
    return f'''

{comment}
def launch({", ".join(args)}):
{prologue(plan, leaves, out_types, region, roots, result)}    strides = []
    for x in leaves:  # broadcast views: stride 0 where an input repeats
        view = x.expand(shape)
        strides += [0] * ({MAX_RANK} - len(shape)) + list(view.stride())
    contig = all(x.shape == shape and x.is_contiguous() for x in leaves)
    grid = {grid}
    {name}[grid]({", ".join(filter(None, [xs, pointers, out_names]))}, n, *dims[1:], *strides{extra}, {options})
    return {result}
'''


def _sections_kernel(name: str, plan: Plan) -> str:
    """One run of programs per output (its first program's id e{i - 1}), nested ifs on the program id."""
    region, outs = plan.region, plan.outputs
    ptrs = [f"g{j}_ptr" for j in range(len(region.leaves))] + [f"out{i}_ptr" for i in range(len(outs))]
    sizes = [f"e{i}" for i in range(len(outs) - 1)]
    for i, out in enumerate(outs):
        sizes += [f"n{i}"] + [f"O{i}_{d}" for d in range(1, len(val(out).shape))]
    params = ptrs + sizes + section_params(plan)
    lines = [f"@triton.jit\ndef {name}({', '.join(params)}, BLOCK: tl.constexpr):",
             "    pid = tl.program_id(0).to(tl.int64)"]
    for i, (statements, value) in enumerate(plan.sections):
        pad = "    " * (i + 1)
        if i < len(outs) - 1:
            lines.append(f"{pad}if pid < e{i}:")
            pad += "    "
        first = f"(pid - e{i - 1})" if i else "pid"
        lines += [pad + line for line in _section(i, len(val(outs[i]).shape), first, statements, value, plan, name)]
        if i < len(outs) - 1:
            lines.append("    " * (i + 1) + "else:")
    return "\n\n" + "\n".join(lines) + "\n"


def _section(i: int, rank: int, first: str, statements: list, value: str, plan: Plan, name: str) -> list[str]:
    lines = [f"# output {i}: its elements' coordinates, then each value read back from its sources'",
             f"idx = {first} * BLOCK + tl.arange(0, BLOCK)", f"mask = idx < n{i}", "rest = idx"]
    for d in range(rank - 1, 0, -1):
        lines += [f"c{d} = rest % O{i}_{d}", f"rest = rest // O{i}_{d}"]
    lines += ["c0 = rest"] if rank else []
    lines += [f"{var} = {render(expr, plan, f'{name}_round_bf16')}" for var, expr in statements]
    lines.append(f"tl.store(out{i}_ptr + idx, {value}.to(out{i}_ptr.dtype.element_ty), mask=mask)")
    return lines


def section_params(plan: Plan) -> list[str]:
    """The region's sizes and strides that the sections name, in region_params order."""
    return [p for p in region_params(plan) if p in plan.region.referenced]


def _section_arg(param: str) -> str:
    """The launcher's value of a section parameter: gz{j}_{d} a size of g{j}, gs{j}_{d} a stride, z{k}_{d} a node's size."""
    head, d = param.rsplit("_", 1)
    if head.startswith("gz"):
        return f"g{head[2:]}.shape[{d}]"
    return f"g{head[2:]}.stride({d})" if head.startswith("gs") else f"{head}[{d}]"


def _sections_launcher(name: str, plan: Plan, lowered: Lowered, config: dict) -> str:
    block, warps = config["BLOCK"], config["num_warps"]
    region, outs = plan.region, plan.outputs
    lines, _, pointers, _ = region_launch(plan)
    shapes = [f"z{region.nodes.index(o)}" for o in outs]
    allocs = [f"    out{i} = torch.empty({z}, dtype={val(o).dtype}, device=g0.device)" for i, (o, z) in enumerate(zip(outs, shapes))]
    counts = [f"    n{i} = math.prod({z})" for i, z in enumerate(shapes)]
    ends = [f"    e{i} = {f'e{i - 1} + ' if i else ''}triton.cdiv(n{i}, {block})" for i in range(len(outs))]
    sizes = [f"e{i}" for i in range(len(outs) - 1)]
    for i, (o, z) in enumerate(zip(outs, shapes)):
        sizes += [f"n{i}"] + [f"{z}[{d}]" for d in range(1, len(val(o).shape))]
    args = [pointers] + [f"out{i}" for i in range(len(outs))] + sizes + [_section_arg(p) for p in section_params(plan)]
    result = ", ".join(f"out{i}" for i in range(len(outs)))
    last = f"e{len(outs) - 1}"
    return f'''

# BLOCK={block}, num_warps={warps}: one of the expert's tuning configurations (recorded with the version).
def launch({", ".join(p.name for p in lowered.placeholders)}):
{lines}
{chr(10).join(allocs + counts + ends)}
    if {last} == 0:
        return {result}
    {name}[({last},)]({", ".join(args)}, BLOCK={block}, num_warps={warps})
    return {result}
'''
