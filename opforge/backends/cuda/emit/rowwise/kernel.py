"""The CUDA row kernel of a row-wise Plan: one block per row (a grid-stride loop over rows when
there are more than MAX_BLOCKS), each pass a strided loop of the block's threads over the row's
columns, re-computing its elementwise input from loads instead of keeping it in scratch memory
(softmax: the max; then sum(exp(x - max)); then the write). Row values are computed by every
thread after the pass that produces them. Scans (cumsum, cumprod) run in the write pass, one
block-wide inclusive scan per column chunk, carried across chunks in double."""
from __future__ import annotations

from dataclasses import dataclass, field

from torch.fx import Node

from opforge.backends.cuda.emit.common import ctype_of
from opforge.backends.cuda.emit.exprs import EXPR, LOADS, STORES, VALUE_TYPES, lit
from opforge.backends.cuda.emit.rowwise.reduce import SHARED, Acc, accumulators, partial_acc
from opforge.codegen.exprs import Var
from opforge.codegen.families.rowwise.layout import (ALIASES, CONSTANTS, GETITEM, SHAPE_VIEWS, Output, Plan,
                                                     constant, node_args)
from opforge.codegen.lower import Unsupported, val

MAX_BLOCKS = 65535


@dataclass
class KernelText:
    name: str
    source: str  # the __global__ kernel
    params: list[tuple[str, str, str]] = field(default_factory=list)  # (C type, C name, what the launcher passes)
    grid: str = "rows"  # "rows": a block per row; "one": a single block


def render(plan: Plan, node: Node, arg, order: tuple[str, ...], used: set[str]) -> str:
    """One elementwise node as a C++ expression; `arg(node)` renders its inputs."""
    return EXPR[str(node.target)](node_args(plan, node, arg, order, used), dict(node.kwargs))


def store(dtype, value) -> str:
    return STORES.get(dtype, f"({ctype_of(dtype)})({{0}})").format(lit(value))


def kernel_source(name: str, params: list[tuple[str, str, str]], shared: set[str], threads: int,
                  body: list[str]) -> str:
    decls = ", ".join(f"{t} __restrict__ {n}" if t.endswith("*") else f"{t} {n}" for t, n, _ in params)
    lines = [f"__global__ void __launch_bounds__({threads}) {name}({decls}) {{"]
    lines += [f"    __shared__ {t} {SHARED[t]}[32];  // one value per warp" for t in sorted(shared)]
    return "\n".join(lines + ["    " + line if line else "" for line in body] + ["}"]) + "\n"


class RowWriter:
    """Writes one row kernel: passes over the columns, then stores."""

    def __init__(self, plan: Plan, name: str) -> None:
        self.plan, self.name = plan, name
        self.code: list[str] = []  # the row loop's lines (row values, accumulators, column loops)
        self.body: list[str] | None = None  # the current column loop's lines
        self.row_memo: dict[Node, object] = {}
        self.col_memo: dict[Node, object] = {}
        self.params: dict[str, tuple[str, str]] = {}  # C name -> (C type, what the launcher passes)
        self.shared: set[str] = set()
        self.sizes: set[str] = set()
        self.done: dict[tuple[str, Node], object] = {}

    def write(self, outputs: list[tuple[int, Output]], partials: list[Node], threads: int) -> KernelText:
        roots = [o.node for _, o in outputs] + [self.plan.reduces[n].source for n in partials]
        passes = self._schedule(roots, partials)
        for depth in sorted(passes):
            self._pass(depth, passes[depth])
        cols = [(i, o) for i, o in outputs if o.kind == "cols"]
        if cols:
            self._loop("write pass: " + ", ".join(o.node.name for _, o in cols),
                       lambda: [self._store_cols(i, o) for i, o in cols])
        for i, o in outputs:
            if o.kind == "row":
                self._store_row(i, o)
        for node in partials:
            self._store_partial(node, self.done.get(("partial", node)) or self.row(self.plan.reduces[node].source))
        params = [(t, n, v) for n, (t, v) in self.params.items()]
        params += [("long long", "n_rows", "n_rows"), ("long long", "n_cols", "n_cols")]
        body = ["for (long long row = blockIdx.x; row < n_rows; row += gridDim.x) {"]
        body += ["    " + line if line else "" for line in self.code] + ["}"]
        return KernelText(self.name, kernel_source(self.name, params, self.shared, threads, body), params)

    def _schedule(self, roots: list[Node], partials: list[Node]) -> dict[int, list[Acc]]:
        """Accumulators grouped by pass: a reduction runs one pass after everything its input needs."""
        depth: dict[Node, int] = {}
        passes: dict[int, list[Acc]] = {}

        def visit(node: Node) -> int:
            if node in depth:
                return depth[node]
            if self.plan.scope.get(node) == "global" or self.plan.is_leaf(node):
                depth[node] = 0
                return 0
            red = self.plan.reduces.get(node)
            before = max((visit(a) for a in node.all_input_nodes), default=0)
            if red is not None:
                accs = accumulators(node, red, f"v_{node.name}")
                for k, acc in enumerate(accs):
                    passes.setdefault(before + 1 + k, []).append(acc)
                before += len(accs)
            depth[node] = before
            return before

        for node in roots:
            visit(node)
        for node in partials:
            red = self.plan.reduces[node]
            if self.plan.cv[red.source]:
                passes.setdefault(visit(red.source) + 1, []).append(partial_acc(node, red, f"v_{node.name}_part"))
        return passes

    def _pass(self, depth: int, accs: list[Acc]) -> None:
        def fill() -> None:
            for acc in accs:
                self.code += acc.init()
                source = self.col(acc.source)
                center = self.done[("mean", acc.center)] if acc.center is not None else None
                index = self.row(acc.index) if acc.index is not None else None
                self.body += ["if (in) {"] + ["    " + line for line in acc.update(source, center, index)] + ["}"]

        self._loop(f"pass {depth} over the columns: " + ", ".join(a.name for a in accs), fill)
        for acc in accs:
            self.code += acc.finish(self.shared)
            self.done[acc.key] = acc.result()
            if acc.key[0] == "value":
                self.row_memo[acc.key[1]] = acc.result()

    def _loop(self, comment: str, fill) -> None:
        """A column loop every thread of the block runs the same number of times (its barriers and
        shuffles stay uniform); `in` masks the columns past the row's end."""
        self.code.append(f"// {comment}")
        self.col_memo, self.body = {}, []
        fill()
        body, self.body = self.body, None
        self.code += ["for (long long start = 0; start < n_cols; start += blockDim.x) {",
                      "    const long long c = start + threadIdx.x;", "    const bool in = c < n_cols;"]
        self.code += ["    " + line for line in body] + ["}"]

    # -- values -------------------------------------------------------------------------------------

    def row(self, node: Node):
        """A value that is the same along the row: computed once per row, by every thread."""
        if node not in self.row_memo:
            self.row_memo[node] = self._row(node)
        return self.row_memo[node]

    def _row(self, node: Node):
        target = str(node.target) if node.op == "call_function" else None
        if self.plan.is_leaf(node):
            p = self._tensor_param(node, cv=False)
            return self._assign(self.code, node, LOADS.get(val(node).dtype, "{0}").format(f"p_{p}[row * sr_{p}]"))
        if self.plan.scope[node] == "global":
            raise Unsupported(f"{node.name}, a full reduction's value, used per row (the CUDA emitter has no apply kernel)")
        if target in CONSTANTS:
            return constant(node)
        if target == GETITEM:
            return self.row(node.args[0])[node.args[1]]
        if target in SHAPE_VIEWS | ALIASES:
            return self.row(node.args[0])
        if node in self.plan.reduces:
            raise AssertionError(f"{node.name} used before its pass")
        return self._assign(self.code, node, render(self.plan, node, self.row, ("n_cols",), self.sizes))

    def col(self, node: Node):
        """A value per column of the current loop iteration (`c`)."""
        if not self.plan.cv[node]:
            return self.row(node)
        if node not in self.col_memo:
            self.col_memo[node] = self._col(node)
        return self.col_memo[node]

    def _col(self, node: Node):
        target = str(node.target) if node.op == "call_function" else None
        if self.plan.is_leaf(node):
            p, dtype = self._tensor_param(node, cv=True), val(node).dtype
            load = LOADS.get(dtype, "{0}").format(f"p_{p}[row * sr_{p} + c * sc_{p}]")
            vt = VALUE_TYPES[dtype]
            return self._assign(self.body, node, f"in ? ({vt})({load}) : ({vt})0")
        if target in SHAPE_VIEWS | ALIASES:
            return self.col(node.args[0])
        if node in self.plan.scans:
            return self._scan(node)
        return self._assign(self.body, node, render(self.plan, node, self.col, ("n_cols",), self.sizes))

    def _scan(self, node: Node) -> Var:
        kind, name = self.plan.scans[node], f"v_{node.name}"
        source = self.col(node.args[0])
        t = "double" if val(node).dtype.is_floating_point else "long long"
        one, functor = (1, "ProdOp()") if kind == "cumprod" else (0, "SumOp()")
        self.shared.add(t)
        self.code.append(f"{t} carry_{name} = {one};  // {kind} in {t}, carried across column chunks")
        self.body += [f"const {t} u_{name} = in ? ({t})({lit(source)}) : ({t}){one};",
                      f"{t} total_{name};",
                      f"const {t} {name} = {functor}(carry_{name}, block_scan(u_{name}, ({t}){one}, "
                      f"{SHARED[t]}, &total_{name}, {functor}));",
                      f"carry_{name} = {functor}(carry_{name}, total_{name});"]
        return Var(name)

    # -- stores and parameters ----------------------------------------------------------------------

    def _store_cols(self, index: int, out: Output) -> None:
        value = self.col(out.node)
        ptr = self._out_param(f"out{index}", f"out{index}", val(out.node).dtype)
        self.body.append(f"if (in) {ptr}[row * n_cols + c] = {store(val(out.node).dtype, value)};")

    def _store_row(self, index: int, out: Output) -> None:
        dtype = val(out.node).dtype
        ptr = self._out_param(f"out{index}", f"out{index}", dtype)
        self.code.append(f"if (threadIdx.x == 0) {ptr}[row] = {store(dtype, self.row(out.node))};")

    def _store_partial(self, node: Node, value) -> None:
        acc = partial_acc(node, self.plan.reduces[node], "")
        param = f"part_{node.name}"
        self.params[param] = (f"{acc.ctype}*", param)
        self.code.append(f"if (threadIdx.x == 0) {param}[row] = ({acc.ctype})({lit(value)});")

    def _out_param(self, param: str, buffer: str, dtype) -> str:
        self.params[param] = (f"{ctype_of(dtype)}*", buffer)
        return param

    def _tensor_param(self, node: Node, cv: bool) -> str:
        p = node.name
        self.params[f"p_{p}"] = (f"const {ctype_of(val(node).dtype)}*", f"{p}_2d")
        self.params[f"sr_{p}"] = ("long long", f"{p}_2d_sr")
        if cv:
            self.params[f"sc_{p}"] = ("long long", f"{p}_2d_sc")
        return p

    @staticmethod
    def _assign(lines: list[str], node: Node, expr: str) -> Var:
        var = Var(f"v_{node.name}")
        lines.append(f"const auto {var} = {expr};")
        return Var(var)
