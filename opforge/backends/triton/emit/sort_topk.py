"""The Triton kernel of a row top-k (families/sort/topk.py): one program per row loads the row, computes
the prologue (a softmax: its max and sum reduced in the kernel), then selects the window in rounds of
argmax (largest key first; equal keys by the lower index, as a stable sort orders them), then computes
the epilogue on the window (renormalised weights) and stores every output once.

Keys are order-preserving integers: a float's bits with the negative ones flipped, -0.0 taken as 0.0
and NaN above +inf (torch sorts NaN as the largest, last when ascending). k rounds of two reductions
over the row: O(k N) per row, for routers' k <= 8..16 of N <= a few hundred experts."""
from __future__ import annotations

import torch
from torch.fx import Node

from opforge.backends.triton.emit.exprs import TL_DTYPES, lit
from opforge.backends.triton.emit.sort_common import FLOATS, ROUND_BF16, elementwise, register, rounded, stored
from opforge.codegen.exprs import Var
from opforge.codegen.families.sort.common import IDENTITY, RESHAPES
from opforge.codegen.families.sort.topk import REDUCES, TopkPlan
from opforge.codegen.lower import Unsupported, val

SPACE = ({"num_warps": 2}, {"num_warps": 4}, {"num_warps": 1}, {"num_warps": 8})
FILL = {"max": 'float("-inf")', "min": 'float("inf")'}
INT_FILL = {torch.int64: 2 ** 63 - 1, torch.int32: 2 ** 31 - 1, torch.int16: 2 ** 15 - 1, torch.int8: 127,
            torch.uint8: 255}

KEY = '''

@triton.jit
def {name}(v, DESCENDING: tl.constexpr):
    """Order-preserving int64 keys, largest first: floats by their bits (negatives flipped, -0.0 as 0.0),
    NaN above everything descending and below everything ascending (torch puts it last ascending)."""
    f = v + 0.0
    bits = f.to(tl.int32, bitcast=True)
    key = tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits).to(tl.int64)
    if DESCENDING:
        return tl.where(f != f, 1 << 40, key)
    return tl.where(f != f, -(1 << 40), -key)
'''
INT_KEY = '''

@triton.jit
def {name}(v, DESCENDING: tl.constexpr):
    """Integer keys, largest first."""
    key = v.to(tl.int64)
    if DESCENDING:
        return key
    return -key
'''


class _Writer:
    """The kernel body: one name per node, statements in order."""

    def __init__(self, plan: TopkPlan, prefix: str) -> None:
        self.plan, self.prefix = plan, prefix
        self.round = f"{prefix}_round_bf16"
        self.names: dict[Node, object] = dict(plan.consts)
        self.lines: list[str] = []

    def value(self, a):
        if isinstance(a, Node):
            if a not in self.names:
                raise Unsupported(f"{a.name} is read before the sort family computes it")
            return self.names[a]
        if isinstance(a, (list, tuple)):
            raise Unsupported("a list argument in a row top-k")
        return a

    def emit(self, node: Node) -> None:
        target, name = str(node.target), Var(f"v_{node.name}")
        space = self.plan.space[node]
        if node in self.plan.picks or node in self.plan.gathers:
            return  # written by the selection loop
        if target in RESHAPES or target in IDENTITY:  # the same numbers, indexed alike in a row
            self.names[node] = self.value(node.args[0])
            return
        if target in REDUCES:
            expr = self._reduce(node)
        else:
            args = [self.value(a) for a in node.args]
            kwargs = {k: self.value(v) if isinstance(v, Node) else v for k, v in node.kwargs.items()}
            expr = elementwise(node, args, kwargs, self.round)
        self.lines.append(f"{name} = {expr}  # {target} ({space})")
        self.names[node] = name

    def _reduce(self, node: Node) -> str:
        kind, source = REDUCES[str(node.target)], node.args[0]
        x, dtype = self.value(source), val(source).dtype
        mask = "mask" if self.plan.space[source] == "n" else "kmask"
        count = "N" if mask == "mask" else "K"
        if kind in ("sum", "mean"):
            fill = "0.0" if dtype in FLOATS else "0"
            expr = f"tl.sum(tl.where({mask}, {x}, {fill}), axis=0)"
            if kind == "mean":
                expr = f"({expr} / {count})"
        else:
            fill = FILL[kind] if dtype in FLOATS else lit(INT_FILL[dtype] * (-1 if kind == "max" else 1))
            expr = f"tl.{kind}(tl.where({mask}, {x}, {fill}), axis=0)"
        out = val(node).dtype
        return rounded(expr, out, self.round) if out in FLOATS else f"({expr}).to({register(out)})"


def loads(plan: TopkPlan, names: dict) -> tuple[list[str], list[str]]:
    """Kernel parameters and load statements for every placeholder."""
    params, lines = [], []
    for node, kind in plan.loads.items():
        if kind == "unused":  # passed to the launcher, never to the kernel
            continue
        p = f"p_{node.name}"
        dtype = val(node).dtype
        up = ".to(tl.float32)" if dtype in FLOATS else ""
        if dtype == torch.float64:
            raise Unsupported("float64 inputs to a row top-k")
        if kind == "n":
            params += [p, f"rs_{node.name}", f"cs_{node.name}"]
            other = "0.0" if dtype in FLOATS else "0"
            lines.append(f"v_{node.name} = tl.load({p} + row * rs_{node.name} + cols * cs_{node.name}, mask=mask, "
                         f"other={other}){up}")
        elif kind == "row":
            params += [p, f"rs_{node.name}"]
            lines.append(f"v_{node.name} = tl.load({p} + row * rs_{node.name}){up}")
        else:
            params.append(p)
            lines.append(f"v_{node.name} = tl.load({p}){up}")
        names[node] = Var(f"v_{node.name}")
    return params, lines


def selection(plan: TopkPlan, w: _Writer, key: str) -> list[str]:
    """The rounds of argmax writing the window's values, ids and gathered values."""
    source = w.value(plan.source)
    picked = list(plan.picks.items())
    picked += [(n, "gather") for n in plan.gathers]
    lines = [f"key = {key}({source}, {plan.descending})", "live = mask"]
    body = ["best = tl.max(tl.where(live, key, -(1 << 62)), axis=0)",
            "pick = tl.min(tl.where(live & (key == best), cols, BLOCK_N), axis=0)",
            "live = live & (cols != pick)", "hit = kcols == j - K_START"]
    for node, kind in picked:
        name = Var(f"w_{node.name}")
        if kind == "indices":
            lines.append(f"{name} = tl.zeros([BLOCK_K], dtype=tl.int64)")
            body.append(f"{name} = tl.where(hit, pick.to(tl.int64), {name})")
        else:
            of = w.value(plan.gathers[node]) if kind == "gather" else source
            reg = register(val(node).dtype)
            fill = "0.0" if val(node).dtype in FLOATS else "0"
            lines.append(f"{name} = tl.zeros([BLOCK_K], dtype={reg})")
            body.append(f"{name} = tl.where(hit, tl.sum(tl.where(cols == pick, {of}, {fill}), axis=0).to({reg}), "
                        f"{name})")
        w.names[node] = name
    return lines + ["for j in range(K_END):"] + ["    " + b for b in body]


def stores(plan: TopkPlan, w: _Writer) -> tuple[list[str], list[str]]:
    params, lines = [], []
    for i, node in enumerate(plan.outputs):
        p, space, dtype = f"out{i}_ptr", plan.space[node], val(node).dtype
        params.append(p)
        x = w.value(node)
        if not isinstance(x, Var):
            raise Unsupported(f"output {node.name} is a constant")
        if dtype not in TL_DTYPES or dtype == torch.float64:
            raise Unsupported(f"a {dtype} output")
        if space == "n":
            lines.append(f"tl.store({p} + row * N + cols, {stored(x, dtype)}, mask=mask)")
        elif space == "k":
            lines.append(f"tl.store({p} + row * K + kcols, {stored(x, dtype)}, mask=kmask)")
        else:
            lines.append(f"tl.store({p} + row, {stored(x, dtype)})")
    return params, lines


def kernel_source(plan: TopkPlan, prefix: str) -> tuple[str, list[str], list[str]]:
    """The kernel's text and its pointer parameters (loads, then outputs)."""
    w = _Writer(plan, prefix)
    in_params, body = loads(plan, w.names)
    for node in plan.before:
        w.emit(node)
    body += w.lines
    w.lines = []
    floats = val(plan.source).dtype in FLOATS
    key = f"{prefix}_key"
    body += ["# Select the window: one argmax per position, the lower index first among equal keys."]
    body += selection(plan, w, key)
    for node in plan.after:
        w.emit(node)
    body += w.lines
    out_params, store_lines = stores(plan, w)
    body += store_lines
    params = in_params + out_params + ["N", "K_START", "K_END", "K", "BLOCK_N: tl.constexpr",
                                       "BLOCK_K: tl.constexpr"]
    name = f"{prefix}_topk_kernel"
    lines = ", ".join(params)
    rounding = ROUND_BF16.format(name=w.round) if any(f"{w.round}(" in line for line in body) else ""
    text = (rounding + (KEY if floats else INT_KEY).format(name=key)
            + f"\n\n@triton.jit\ndef {name}({lines}):\n"
            + "    row = tl.program_id(0).to(tl.int64)\n"
            + "    cols = tl.arange(0, BLOCK_N)\n    mask = cols < N\n"
            + "    kcols = tl.arange(0, BLOCK_K)\n    kmask = kcols < K\n"
            + "".join(f"    {line}\n" for line in body))
    return text, in_params, out_params


LAUNCHER = '''

# {comment}
# num_warps={warps}: one tuning configuration.
def {launcher}({args}):
    shape = torch.broadcast_shapes({shapes})
    N = shape[-1]
    rows_shape = tuple(shape[:-1])
    rows = math.prod(rows_shape)
    K_END = {k_end}
    K_START = min({start}, K_END)
    K = K_END - K_START
{check}{views}{outs}    if rows and N:
        {kernel}[(rows,)]({call}, N, K_START, K_END, K,
            BLOCK_N=triton.next_power_of_2(N), BLOCK_K=triton.next_power_of_2(max(K, 1)), num_warps={warps})
    return {result}
'''


def launcher_source(plan: TopkPlan, prefix: str, launcher: str, warps: int) -> str:
    args = {node: f"a{i}" for i, node in enumerate(plan.loads)}
    loads = [n for n, kind in plan.loads.items() if kind in ("n", "row")]
    shapes = ", ".join(f"{args[n]}.shape" for n in loads)
    views, call = [], []
    for node, kind in plan.loads.items():
        a = args[node]
        if kind == "n":
            views.append(f"    {a} = {a}.expand(shape).reshape(rows, N)")
            call += [a, f"{a}.stride(0)", f"{a}.stride(1)"]
        elif kind == "row":
            views.append(f"    {a} = {a}.expand(rows_shape + (1,)).reshape(rows, 1)")
            call += [a, f"{a}.stride(0)"]
        elif kind != "unused":
            call.append(a)
    device = args[loads[0]] + ".device"
    outs, rank = [], plan.rank
    for i, node in enumerate(plan.outputs):
        space = plan.space[node]
        if space == "n":
            size = "shape"
        elif space == "k":
            size = "rows_shape + (K,)"
        elif val(node).dim() == rank:  # keepdim
            size = "rows_shape + (1,)"
        elif val(node).dim() == rank - 1:
            size = "rows_shape"
        else:
            raise Unsupported(f"output {node.name} of shape {list(val(node).shape)} is not one per row")
        outs.append(f"    out{i} = torch.empty({size}, dtype={val(node).dtype}, device={device})")
        call.append(f"out{i}")
    w = plan.window
    k_end = "N" if w.end is None else f"min({w.end}, N)"
    check = ""
    if w.topk is not None:
        check = (f"    if {w.topk} > N:\n        raise RuntimeError(f\"selected index k out of range: "
                 f"topk({w.topk}) of rows of {{N}}\")\n")
    result = ", ".join(f"out{i}" for i in range(len(plan.outputs)))
    what = ("topk" if w.topk is not None else "sort") + f" ({'descending' if plan.descending else 'ascending'})"
    window = f"positions [{w.start}, {'N' if w.end is None else w.end})"
    return LAUNCHER.format(
        comment=f"One program per row: the row's {what}, {window}, with the prologue and epilogue fused.",
        warps=warps, launcher=launcher, args=", ".join(args.values()), shapes=shapes,
        k_end=k_end, start=w.start, check=check, views="".join(v + "\n" for v in views),
        outs="".join(o + "\n" for o in outs), kernel=f"{prefix}_topk_kernel", call=", ".join(call), result=result)
