"""The CUDA emitter of a pointwise Plan (families/pointwise): a grid-stride loop over the flattened
output, each thread taking VEC elements a tile (THREADS apart, so a warp's loads stay coalesced).
Inputs are passed contiguous; one that broadcasts is read through its strides (0 along the dims it
repeats), from the output's coordinates, unless every input already has the output's shape (CONTIG).
The fused chain runs in fp32; half types convert on load and store."""
from __future__ import annotations

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.cuda.emit.common import BROADCAST_PY, c_name, check_inputs, ctype_of, cuda_module, header
from opforge.backends.cuda.emit.exprs import EXPR, LOADS, STORES, lit, prelude
from opforge.codegen.emit.pointwise import prologue, region_launch, region_params
from opforge.codegen.families.pointwise.plan import MAX_RANK, Plan
from opforge.codegen.lower import Lowered, Unsupported, val

# Best guess first: 256 threads x 4 elements per tile; the rest for tuning on a GPU.
SPACE = ({"THREADS": 256, "VEC": 4}, {"THREADS": 256, "VEC": 1}, {"THREADS": 512, "VEC": 4},
         {"THREADS": 128, "VEC": 8}, {"THREADS": 1024, "VEC": 2})
MAX_BLOCKS = 65535  # the grid-stride loop covers the rest


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    check_inputs(lowered)
    plan = Plan(lowered, index_maps=True)
    exprs = [(op.var, EXPR[op.target](op.args, op.kwargs)) for op in plan.ops]
    for leaf in plan.used:
        ctype_of(plan.dtype(leaf))
    for out in plan.outputs:
        ctype_of(val(out).dtype)
    if not plan.used and not plan.region:
        raise Unsupported("a pointwise graph that loads no input")
    for leaf in plan.region.leaves if plan.region else []:
        ctype_of(plan.dtype(leaf.name))
    name = c_name(title, "pointwise")

    def render(config: dict) -> str:
        code = _kernel(name, plan, exprs, config) + _c_launcher(name, plan, config)
        source = prelude(code) + code
        return (header(f"Pointwise CUDA kernel for {title}", "pointwise", lowered) + cuda_module(source)
                + BROADCAST_PY + _launcher(name, plan, config) + model_new(lowered, "launch", shapes))

    return Kernel("pointwise", SPACE, render)


def _params(plan: Plan) -> list[str]:
    """The kernel's parameters after the pointers: sizes, per-input strides, the fast-path flag."""
    sizes = [f"long long S{d}" for d in range(1, MAX_RANK)]
    strides = [f"long long st{i}_{d}" for i in range(len(plan.used)) for d in range(MAX_RANK)]
    return ["long long n"] + sizes + strides + [f"long long {p}" for p in region_params(plan)] + ["int contig"]


def _pointers(plan: Plan, restrict: str) -> list[str]:
    ins = [f"const {ctype_of(plan.dtype(leaf))}* {restrict}in{i}" for i, leaf in enumerate(plan.used)]
    ins += [f"const {ctype_of(plan.dtype(leaf.name))}* {restrict}g{j}"
            for j, leaf in enumerate(plan.region.leaves if plan.region else [])]
    outs = [f"{ctype_of(val(o).dtype)}* {restrict}out{i}" for i, o in enumerate(plan.outputs)]
    return ins + outs


def _offsets(plan: Plan) -> list[str]:
    """Per-input element offsets of output index `idx`: the index itself, or through coordinates."""
    coords = ["long long rest = idx;"]
    for d in range(MAX_RANK - 1, 0, -1):
        coords += [f"const long long c{d} = rest % S{d};", f"rest /= S{d};"]
    coords.append("const long long c0 = rest;")
    lines = [f"long long off{i} = idx;" for i in range(len(plan.used))]
    if plan.region:  # index maps need the coordinates on either path
        lines = coords + lines
    if not plan.used:
        return lines
    lines.append("if (!contig) {  // linear index -> coordinates -> offsets (stride 0 along broadcast dims)")
    lines += [] if plan.region else ["    " + c for c in coords]
    for i in range(len(plan.used)):
        lines.append(f"    off{i} = " + " + ".join(f"c{d} * st{i}_{d}" for d in range(MAX_RANK)) + ";")
    return lines + ["}"]


def _body(plan: Plan, exprs: list) -> list[str]:
    lines = _offsets(plan)
    for i, leaf in enumerate(plan.used):
        load = LOADS.get(plan.dtype(leaf), "{0}").format(f"in{i}[off{i}]")
        lines.append(f"const auto {plan.names[leaf]} = {load};")
    if plan.region:
        lines += ["const bool mask = true;  // idx < n: the loop breaks past the end",
                  "// index maps: each value read from its sources' coordinates"]
        lines += [f"const auto {name} = {render(expr, plan)};" for name, expr in plan.region.statements]
    lines.append("// the fused chain, in graph order")
    lines += [f"const auto {var} = {expr};" for var, expr in exprs]
    for i, out in enumerate(plan.outputs):
        dtype = val(out).dtype
        store = STORES.get(dtype, f"({ctype_of(dtype)})({{0}})").format(plan.names[out.name])
        lines.append(f"out{i}[idx] = {store};")
    return lines


def render(expr, plan: Plan) -> str:
    """A region statement's expression (families/pointwise/indexmap.py) in C++: min and max take
    both sides in the type the region inferred (long long or float), loads are guarded by their mask."""
    if not isinstance(expr, tuple):
        return lit(expr) if isinstance(expr, (int, float)) else str(expr)
    kind, *a = expr
    if kind == "bin":
        return f"({render(a[1], plan)} {'/' if a[0] == '//' else a[0]} {render(a[2], plan)})"
    if kind == "load":
        leaf = plan.region.leaves[a[0]]
        load = LOADS.get(plan.dtype(leaf.name), "{0}").format(f"g{a[0]}[{render(a[1], plan)}]")
        return f"({a[2]} ? {load} : 0)"
    if kind == "where":
        return f"({render(a[0], plan)} ? {render(a[1], plan)} : {render(a[2], plan)})"
    if kind in ("f32", "i64"):
        return f"({'float' if kind == 'f32' else 'long long'})({render(a[0], plan)})"
    ctype = "float" if plan.region.kind(expr) == "f" else "long long"
    fn = {"min": "fminf", "max": "fmaxf"}[kind] if ctype == "float" else kind
    return f"{fn}(({ctype})({render(a[0], plan)}), ({ctype})({render(a[1], plan)}))"


def _kernel(name: str, plan: Plan, exprs: list, config: dict) -> str:
    threads, vec = config["THREADS"], config["VEC"]
    params = ", ".join(_pointers(plan, "__restrict__ ") + _params(plan))
    body = "\n".join(" " * 12 + line for line in _body(plan, exprs))
    return f'''
// THREADS={threads}, VEC={vec}: one of the expert's tuning configurations (recorded with the version).
__global__ void __launch_bounds__({threads}) {name}_kernel({params}) {{
    const long long tile = (long long){threads} * {vec};
    for (long long start = (long long)blockIdx.x * tile; start < n; start += (long long)gridDim.x * tile) {{
#pragma unroll
        for (int k = 0; k < {vec}; ++k) {{
            const long long idx = start + (long long)k * {threads} + threadIdx.x;
            if (idx >= n) break;
{body}
        }}
    }}
}}
'''


def _c_launcher(name: str, plan: Plan, config: dict) -> str:
    threads, vec = config["THREADS"], config["VEC"]
    params = ", ".join(_pointers(plan, "") + _params(plan) + ["cudaStream_t stream"])
    gathered = [f"g{j}" for j in range(len(plan.region.leaves))] if plan.region else []
    args = [f"in{i}" for i in range(len(plan.used))] + gathered + [f"out{i}" for i in range(len(plan.outputs))]
    args += ["n"] + [f"S{d}" for d in range(1, MAX_RANK)]
    args += [f"st{i}_{d}" for i in range(len(plan.used)) for d in range(MAX_RANK)] + region_params(plan) + ["contig"]
    return f'''
extern "C" void {name}_launch({params}) {{
    long long blocks = (n + {threads * vec} - 1) / {threads * vec};
    if (blocks <= 0) return;
    if (blocks > {MAX_BLOCKS}) blocks = {MAX_BLOCKS};
    {name}_kernel<<<(unsigned)blocks, {threads}, 0, stream>>>({", ".join(args)});
}}
'''


def _launcher(name: str, plan: Plan, config: dict) -> str:
    args = [p.name for p in plan.lowered.placeholders]
    outs = [f"out{i}" for i in range(len(plan.outputs))]
    region, roots, pointers, extra = region_launch(plan, contiguous=True)
    result = ", ".join(outs)
    head = prologue(plan, plan.used, [val(o).dtype for o in plan.outputs], region, roots, result)
    return f'''

def launch({", ".join(args)}):
{head}    leaves = [x.contiguous() for x in leaves]
    strides = [s for x in leaves for s in _broadcast_strides(x.shape, dims)]
    contig = int(all(tuple(x.shape) == tuple(shape) for x in leaves))
    _lib.{name}_launch({", ".join(filter(None, ["*leaves", pointers] + outs))}, n, *dims[1:], *strides{extra}, contig)
    return {result}
'''
