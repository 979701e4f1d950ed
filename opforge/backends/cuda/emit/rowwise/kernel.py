"""The CUDA row kernel of a row-wise Plan: one block per row (a grid-stride loop over rows when
there are more than MAX_BLOCKS), each pass (codegen/emit/row_kernel.py: softmax's max, then
sum(exp(x - max)), then the write) a strided loop of the block's threads over the row's columns.
Row values are computed by every thread after the pass that produces them. Scans (cumsum, cumprod) run in the write pass, one
block-wide inclusive scan per column chunk, carried across chunks in double."""
from __future__ import annotations

from dataclasses import dataclass, field

from torch.fx import Node

from opforge.backends.cuda.emit.common import ctype_of
from opforge.backends.cuda.emit.exprs import EXPR, LOADS, STORES, VALUE_TYPES, lit
from opforge.backends.cuda.emit.rowwise.reduce import SHARED, Acc, accumulators, partial_acc
from opforge.codegen.emit.row_kernel import RowKernelWriter
from opforge.codegen.exprs import Var
from opforge.codegen.families.rowwise.layout import Output, Plan, node_args
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


class CudaRowWriter(RowKernelWriter):
    """Writes one CUDA row kernel (the passes: codegen/emit/row_kernel.py) for blocks of `threads`."""

    def __init__(self, plan: Plan, name: str, threads: int) -> None:
        super().__init__(plan, name)
        self.threads = threads
        self.params: dict[str, tuple[str, str]] = {}  # C name -> (C type, what the launcher passes)
        self.shared: set[str] = set()

    def text(self) -> KernelText:
        params = [(t, n, v) for n, (t, v) in self.params.items()]
        params += [("long long", "n_rows", "n_rows"), ("long long", "n_cols", "n_cols")]
        body = ["for (long long row = blockIdx.x; row < n_rows; row += gridDim.x) {"]
        body += ["    " + line if line else "" for line in self.code] + ["}"]
        return KernelText(self.name, kernel_source(self.name, params, self.shared, self.threads, body), params)

    # -- accumulators and the column loop -----------------------------------------------------------

    def accumulators(self, node: Node, red) -> list[Acc]:
        return accumulators(node, red, f"v_{node.name}")

    def partial_accs(self, node: Node, red) -> list[Acc]:
        return [partial_acc(node, red, f"v_{node.name}_part")]

    def fold(self, accs: list[Acc]) -> None:
        for acc in accs:
            self.code += acc.init()
            source = self.col(acc.source)
            center = self.done[("mean", acc.center)] if acc.center is not None else None
            index = self.row(acc.index) if acc.index is not None else None
            self.body += ["if (in) {"] + ["    " + line for line in acc.update(source, center, index)] + ["}"]

    def finish(self, acc: Acc) -> list[str]:
        return acc.finish(self.shared)

    def comment(self, text: str) -> str:
        return f"// {text}"

    def column_loop(self, body: list[str]) -> list[str]:
        """A column loop every thread of the block runs the same number of times (its barriers and
        shuffles stay uniform); `in` masks the columns past the row's end."""
        return (["for (long long start = 0; start < n_cols; start += blockDim.x) {",
                 "    const long long c = start + threadIdx.x;", "    const bool in = c < n_cols;"]
                + ["    " + line for line in body] + ["}"])

    # -- values -------------------------------------------------------------------------------------

    def load_row(self, node: Node) -> Var:
        p = self._tensor_param(node, cv=False)
        return self.assign(self.code, node.name, LOADS.get(val(node).dtype, "{0}").format(f"p_{p}[row * sr_{p}]"))

    def load_col(self, node: Node, rev: bool) -> Var:
        p, dtype = self._tensor_param(node, cv=True), val(node).dtype
        load = LOADS.get(dtype, "{0}").format(f"p_{p}[row * sr_{p} + c * sc_{p}]")
        vt = VALUE_TYPES[dtype]
        return self.assign(self.body, node.name, f"in ? ({vt})({load}) : ({vt})0")

    def global_value(self, node: Node):
        raise Unsupported(f"{node.name}, a full reduction's value, used per row (the CUDA emitter has no apply kernel)")

    def expr(self, node: Node, arg) -> str:
        return render(self.plan, node, arg, ("n_cols",), self.sizes)

    def scan(self, node: Node) -> Var:
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

    @staticmethod
    def assign(lines: list[str], name: str, expr: str) -> Var:
        var = Var(f"v_{name}")
        lines.append(f"const auto {var} = {expr};")
        return Var(var)

    # -- stores and parameters ----------------------------------------------------------------------

    def store_cols(self, index: int, out: Output) -> None:
        value = self.col(out.node)
        ptr = self._out_param(f"out{index}", f"out{index}", val(out.node).dtype)
        self.body.append(f"if (in) {ptr}[row * n_cols + c] = {store(val(out.node).dtype, value)};")

    def store_row_output(self, index: int, out: Output) -> None:
        dtype = val(out.node).dtype
        ptr = self._out_param(f"out{index}", f"out{index}", dtype)
        self.code.append(f"if (threadIdx.x == 0) {ptr}[row] = {store(dtype, self.row(out.node))};")

    def store_partial(self, node: Node) -> None:
        value = self.partial_value(node)
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
