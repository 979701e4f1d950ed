"""The CUDA finish kernel of a row-wise Plan with full reductions: one block combines the per-row
partials the row kernel stored (a strided loop, then a block reduction: no atomics, so the result is
deterministic), then computes the 0-d outputs."""
from __future__ import annotations

from torch.fx import Node

from opforge.backends.cuda.emit.common import ctype_of
from opforge.backends.cuda.emit.exprs import lit
from opforge.backends.cuda.emit.rowwise.kernel import KernelText, kernel_source, render, store
from opforge.backends.cuda.emit.rowwise.reduce import partial_acc
from opforge.codegen.exprs import Var
from opforge.codegen.emit.row_kernel import FinishValues
from opforge.codegen.families.rowwise.layout import Plan
from opforge.codegen.lower import val

ORDER = ("numel", "size0", "n_rows", "n_cols")
SIZES = [("long long", name, name) for name in ("n_rows", "n_cols", "numel", "size0")]


class FinishWriter(FinishValues):
    """Writes the finish kernel: reduce the per-row partials, then the epilogue on 0-d values."""

    def __init__(self, plan: Plan, name: str) -> None:
        self.plan, self.name = plan, name
        self.code: list[str] = []
        self.memo: dict[Node, object] = {}
        self.params: list[tuple[str, str, str]] = []
        self.shared: set[str] = set()

    def write(self, threads: int) -> KernelText:
        self._reduce_partials([n for n, r in self.plan.reduces.items() if r.full])
        stores = []
        for i, out in enumerate(self.plan.outputs):
            if out.kind == "scalar":
                dtype = val(out.node).dtype
                self.params.append((f"{ctype_of(dtype)}*", f"out{i}", f"out{i}"))
                stores.append(f"    out{i}[0] = {store(dtype, self.value(out.node))};")
        self.code += ["if (threadIdx.x == 0) {"] + stores + ["}"]
        params = self.params + SIZES
        return KernelText(self.name, kernel_source(self.name, params, self.shared, threads, self.code), params, "one")

    def _reduce_partials(self, fulls: list[Node]) -> None:
        self.code.append("// combine the per-row partials (one block: deterministic, no atomics)")
        for node in fulls:
            red = self.plan.reduces[node]
            acc = partial_acc(node, red, f"v_{node.name}")
            self.params.insert(0, (f"const {acc.ctype}*", f"part_{node.name}", f"part_{node.name}"))
            self.code += acc.init()
            self.code += ["for (long long r = threadIdx.x; r < n_rows; r += blockDim.x) {"]
            self.code += ["    " + line for line in acc.update(Var(f"part_{node.name}[r]"))] + ["}"]
            self.code += acc.finish(self.shared)
            value = acc.result()
            if red.kind == "mean":
                count = "numel" if self.plan.cv[red.source] else "n_rows"
                self.code.append(f"const float v_{node.name}_mean = (float){value} / (float){count};")
                value = Var(f"v_{node.name}_mean")
            self.memo[node] = value

    def compute(self, node: Node) -> Var:
        expr = render(self.plan, node, self.value, ORDER, set())
        self.code.append(f"const auto v_{node.name} = {lit(Var(expr))};")
        return Var(f"v_{node.name}")
