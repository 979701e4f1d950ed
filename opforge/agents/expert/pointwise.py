"""Pointwise chains: every elementwise op of the graph fused into one kernel over the output.

Inputs may broadcast (a bias row, a [B, 1] column, a 0-d scalar): the launcher views each input
as broadcast to the output shape and passes its strides (0 along broadcast dims), padded to
MAX_RANK dims; the kernel turns each linear output index into per-input offsets. When every input
is contiguous and already output-shaped, a constexpr fast path uses the index directly."""
from __future__ import annotations

from torch.fx import Node

from opforge.agents.expert import emit
from opforge.agents.expert.exprs import EXPR, Var
from opforge.agents.expert.lower import Lowered, Unsupported, val
from opforge.agents.expert.views import INDEXING, RESHAPES, index_replay

MAX_RANK = 5
LEAF_VIEWS = {  # views applied to an input before it broadcasts: replayed by the launcher
    "aten.unsqueeze.default": lambda a: f".unsqueeze({a[1]})",
    "aten.squeeze.dims": lambda a: f".squeeze({tuple(a[1])!r})",
    "aten.squeeze.dim": lambda a: f".squeeze({a[1]})",
    "aten.permute.default": lambda a: f".permute({tuple(a[1])!r})",
    "aten.t.default": lambda a: ".t()",
    "aten.transpose.int": lambda a: f".transpose({a[1]}, {a[2]})",
    "aten.expand.default": lambda a: "",
}
SPACE = ({"BLOCK": 1024, "num_warps": 4}, {"BLOCK": 2048, "num_warps": 8}, {"BLOCK": 512, "num_warps": 4},
         {"BLOCK": 4096, "num_warps": 8})


class _Plan:
    """The graph split into leaves (inputs with their view chains) and expressions."""

    def __init__(self, lowered: Lowered) -> None:
        self.leaves: dict[str, tuple[str, str]] = {}  # node name -> (placeholder, launcher view code)
        self.exprs: list[tuple[str, str]] = []  # (value name, Triton expression)
        self.names: dict[str, Var] = {}
        bad = sorted({str(n.target) for n in lowered.graph.nodes if n.op == "call_function"
                      and str(n.target) not in EXPR and str(n.target) not in LEAF_VIEWS
                      and str(n.target) not in RESHAPES and str(n.target) not in INDEXING})
        if bad:
            raise Unsupported(f"not pointwise: {', '.join(bad)}")
        for node in lowered.graph.nodes:
            if node.op == "placeholder":
                self.leaves[node.name] = (node.name, node.name)
                self.names[node.name] = Var(f"v_{node.name}")
            elif node.op == "call_function":
                self._add(node)

    def _add(self, node: Node) -> None:
        target = str(node.target)
        if target in LEAF_VIEWS or target in RESHAPES or target in INDEXING:
            source = node.args[0]
            if not isinstance(source, Node) or source.name not in self.leaves:
                raise Unsupported(f"a view ({target}) of a computed value")
            base, code = self.leaves[source.name]
            if target in INDEXING:  # a slice or select: bounds re-read from the run-time size
                code = index_replay(node, code)
            else:
                code += _reshape(node) if target in RESHAPES else LEAF_VIEWS[target](node.args)
            self.leaves[node.name] = (base, code)
            self.names[node.name] = Var(f"v_{node.name}")
            return
        args = [self.names[a.name] if isinstance(a, Node) else a for a in node.args]
        if target == "aten.full.default" and all(size == 1 for size in args[0]):
            args[0] = ()  # a 0-d (or all-1) constant broadcasts as its value
        if any(isinstance(a, (list, tuple)) and a for a in args):
            raise Unsupported(f"{target} with list arguments")
        self.names[node.name] = Var(f"v_{node.name}")
        self.exprs.append((self.names[node.name], EXPR[target](args, dict(node.kwargs))))

    def used_leaves(self, lowered: Lowered) -> list[str]:
        """Leaves in placeholder order, each distinct view chain once."""
        order = [p.name for p in lowered.placeholders]
        return sorted(self.leaves, key=lambda n: (order.index(self.leaves[n][0]), n))


def _reshape(node: Node) -> str:
    """A reshape of an input that only adds or drops size-1 dims (a [C] weight viewed [1, C, 1, 1]),
    replayed shape-generically: as written when its sizes are all 1 or -1, else as squeezes and
    unsqueezes, so no size of the export is baked in."""
    src, out = tuple(val(node.args[0]).shape), tuple(val(node).shape)
    written = list(node.args[1])
    if all(s in (1, -1) for s in written) and written.count(-1) <= 1:
        return f".reshape({tuple(written)!r})"
    if [s for s in src if s != 1] != [s for s in out if s != 1]:
        raise Unsupported(f"{node.target} that reshapes {list(src)} to {list(out)}")
    ones = tuple(i for i, s in enumerate(src) if s == 1)
    code = f".squeeze({ones!r})" if ones else ""
    return code + "".join(f".unsqueeze({i})" for i, s in enumerate(out) if s == 1)


def generate(lowered: Lowered, title: str, shapes: dict) -> emit.Kernel:
    plan = _Plan(lowered)
    outputs = lowered.outputs
    if not outputs or any(not isinstance(o, Node) or o.op == "placeholder" for o in outputs):
        raise Unsupported("an output that is an input itself")
    if len({tuple(val(o).shape) for o in outputs}) != 1:
        raise Unsupported("outputs of different shapes")
    leaves = [n for n in plan.used_leaves(lowered) if _is_used(lowered, n)]
    name = f"_{title}_pointwise_kernel"

    def render(config: dict) -> str:
        return (emit.header(f"Pointwise kernel for {title}", "pointwise", lowered)
                + "import math\n\n"
                + _kernel(name, plan, leaves, lowered)
                + _launcher(name, plan, leaves, lowered, config)
                + emit.model_new(lowered, "launch", shapes))

    return emit.Kernel("pointwise", SPACE, render)


def _is_used(lowered: Lowered, name: str) -> bool:
    node = next(n for n in lowered.graph.nodes if n.name == name)
    views = LEAF_VIEWS.keys() | RESHAPES | INDEXING
    return any(str(u.target) not in views for u in node.users) or any(o is node for o in lowered.outputs)


def _kernel(name: str, plan: _Plan, leaves: list[str], lowered: Lowered) -> str:
    ptrs = [f"in{i}_ptr" for i in range(len(leaves))] + [f"out{i}_ptr" for i in range(len(lowered.outputs))]
    strides = [f"st{i}_{d}" for i in range(len(leaves)) for d in range(MAX_RANK)]
    sizes = [f"S{d}" for d in range(1, MAX_RANK)]
    lines = [f"@triton.jit\ndef {name}({', '.join(ptrs + ['n'] + sizes + strides)}, BLOCK: tl.constexpr, CONTIG: tl.constexpr):",
             "    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)",
             "    mask = idx < n",
             "    if CONTIG:  # every input already has the output's shape and layout"]
    lines += [f"        off{i} = idx" for i in range(len(leaves))]
    lines += ["    else:  # linear index -> coordinates -> per-input offsets (stride 0 along broadcast dims)",
              "        rest = idx"]
    for d in range(MAX_RANK - 1, 0, -1):
        lines += [f"        c{d} = rest % S{d}", f"        rest = rest // S{d}"]
    lines.append("        c0 = rest")
    for i in range(len(leaves)):
        lines.append(f"        off{i} = " + " + ".join(f"c{d} * st{i}_{d}" for d in range(MAX_RANK)))
    for i, leaf in enumerate(leaves):
        upcast = _upcast(lowered, leaf)
        lines.append(f"    {plan.names[leaf]} = tl.load(in{i}_ptr + off{i}, mask=mask){upcast}")
    lines.append("    # the fused chain, in graph order")
    lines += [f"    {var} = {expr}" for var, expr in plan.exprs]
    for i, out in enumerate(lowered.outputs):
        lines.append(f"    tl.store(out{i}_ptr + idx, {plan.names[out.name]}.to(out{i}_ptr.dtype.element_ty), mask=mask)")
    return "\n\n" + "\n".join(lines) + "\n"


def _upcast(lowered: Lowered, leaf: str) -> str:
    node = next(n for n in lowered.graph.nodes if n.name == leaf)
    dtype = val(node).dtype
    return ".to(tl.float32)" if dtype.is_floating_point and dtype.itemsize < 4 else ""


def _launcher(name: str, plan: _Plan, leaves: list[str], lowered: Lowered, config: dict) -> str:
    args = [p.name for p in lowered.placeholders]
    out_types = [str(val(o).dtype) for o in lowered.outputs]
    views = "\n".join(f"    x{i} = {plan.leaves[leaf][1]}" for i, leaf in enumerate(leaves))
    xs = ", ".join(f"x{i}" for i in range(len(leaves)))
    outs = "\n".join(f"    out{i} = torch.empty(shape, dtype={t}, device=x0.device)" for i, t in enumerate(out_types))
    out_names = ", ".join(f"out{i}" for i in range(len(out_types)))
    result = out_names if len(out_types) > 1 else "out0"
    block, warps = config["BLOCK"], config["num_warps"]
    return f'''

# BLOCK={block}, num_warps={warps}: one of the expert's tuning configurations (recorded with the version).
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
    grid = (triton.cdiv(n, {block}),)
    {name}[grid]({xs}, {out_names}, n, *dims[1:], *strides, BLOCK={block}, CONTIG=contig, num_warps={warps})
    return {result}
'''
