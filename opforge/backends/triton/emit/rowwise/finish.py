"""The finish kernel of a row-wise Plan with full reductions: one program combines the per-row
partials the row kernel stored (no atomics, so the result is deterministic), then computes the 0-d
outputs and the global values the apply kernel loads."""
from __future__ import annotations

from torch.fx import Node

from opforge.backends.triton.emit.exprs import TL_DTYPES, lit
from opforge.backends.triton.emit.rowwise.accs import identity, partial_acc, wrap
from opforge.backends.triton.emit.rowwise.text import KernelText, render, safe
from opforge.codegen.exprs import Var
from opforge.codegen.emit.row_kernel import FinishValues
from opforge.codegen.families.rowwise.layout import MOMENTS, Plan, Reduce, acc_dtype
from opforge.codegen.lower import Unsupported, val


class FinishWriter(FinishValues):
    """Writes the finish kernel: reduce the per-row partials, then the epilogue on 0-d values."""

    ORDER = ("numel", "size0", "n_rows", "n_cols")

    def __init__(self, plan: Plan, name: str) -> None:
        self.plan, self.name = plan, name
        self.code: list[str] = ["offs = tl.arange(0, BLOCK)"]
        self.memo: dict[Node, object] = {}
        self.params: dict[str, str] = {}
        self.helpers: set[str] = set()
        self.sizes: set[str] = {"n_rows"}

    def write(self, globals_: dict[Node, int]) -> KernelText:
        fulls = [(n, r) for n, r in self.plan.reduces.items() if r.full]
        self._reduce_partials(fulls)
        for i, out in enumerate(self.plan.outputs):
            if out.kind == "scalar":
                self.params[f"out{i}_ptr"] = f"out{i}"
                self.code.append(f"tl.store(out{i}_ptr, {lit(self.value(out.node))}.to(out{i}_ptr.dtype.element_ty))")
        for node, k in globals_.items():
            if not val(node).dtype.is_floating_point:
                raise Unsupported(f"a non-float global value {node.name} used per element")
            self.params["glob_ptr"] = "glob"
            self.code.append(f"tl.store(glob_ptr + {k}, {lit(self.value(node))})  # for the apply kernel")
        sizes = [s for s in ("n_rows", "n_cols", "numel", "size0") if s in self.sizes]
        params = list(self.params.items()) + [(s, s) for s in sizes]
        head = ["@triton.jit", wrap(f"def {self.name}", [p for p, _ in params] + ["BLOCK: tl.constexpr"], ":")]
        source = "\n".join(head + ["    " + line for line in self.code]) + "\n"
        return KernelText(self.name, source, params, "one", self.helpers)

    def _reduce_partials(self, fulls: list[tuple[Node, Reduce]]) -> None:
        for node, red in fulls:
            if red.kind in MOMENTS:
                self._combine_moments(node, red)
        fulls = [(node, red) for node, red in fulls if red.kind not in MOMENTS]
        if fulls:
            self._combine(fulls)

    def _combine_moments(self, node: Node, red: Reduce) -> None:
        """var/std from each row's mean m_r and squared deviations M2_r, every row n_cols elements
        (Chan, Golub and LeVeque's pairwise update with equal counts): mean = sum(m_r) / n_rows, then
        M2 = sum(M2_r) + n_cols * sum((m_r - mean)^2), the last sum corrected as the rows' M2 are
        (accs.partial_accs). No sum of squares of raw values, so a mean of 1000 over 1e5 elements
        keeps fp32's relative precision."""
        name = safe(node.name)
        dtype = TL_DTYPES[acc_dtype(red.kind, red.source, node)]
        means, m2s = f"{name}_mean_part_ptr", f"{name}_part_ptr"
        self.params.update({means: f"part_{name}_mean", m2s: f"part_{name}"})
        self.sizes |= {"n_cols", "numel"}
        loop = ["for start in range(0, n_rows, BLOCK):", "    r = start + offs", "    valid = r < n_rows"]
        def load(ptr: str) -> str:
            return f"tl.load({ptr} + r, mask=valid, other=0.0)"

        divisor = f"(numel - {red.correction!r})" if red.correction else "numel"
        value = f"{name}_m2 / {divisor}"
        self.code += [f"# {red.kind} over every dim: combine the rows' means and squared deviations",
                      f"acc_{name}_mean = tl.zeros([BLOCK], dtype={dtype})", *loop,
                      f"    acc_{name}_mean += {load(means)}",
                      f"{name}_mean = tl.sum(acc_{name}_mean, axis=0) / n_rows",
                      f"acc_{name}_m2 = tl.zeros([BLOCK], dtype={dtype})",
                      f"acc_{name}_dev = tl.zeros([BLOCK], dtype={dtype})",
                      f"acc_{name}_dsum = tl.zeros([BLOCK], dtype={dtype})", *loop,
                      f"    d_{name} = tl.where(valid, {load(means)} - {name}_mean, 0.0)",
                      f"    acc_{name}_dev += d_{name} * d_{name}",
                      f"    acc_{name}_dsum += d_{name}",
                      f"    acc_{name}_m2 += {load(m2s)}",
                      f"{name}_dsum = tl.sum(acc_{name}_dsum, axis=0)",
                      f"{name}_between = tl.sum(acc_{name}_dev, axis=0) - {name}_dsum * {name}_dsum / n_rows",
                      f"{name}_m2 = tl.sum(acc_{name}_m2, axis=0) + n_cols * {name}_between",
                      f"{name} = {f'tl.sqrt({value})' if red.kind == 'std' else value}"]
        self.memo[node] = Var(name)

    def _combine(self, fulls: list[tuple[Node, Reduce]]) -> None:
        accs = [partial_acc(node, red, safe(node.name)) for node, red in fulls]
        self.code.append("# combine the per-row partials (one program: deterministic, no atomics)")
        loop = ["for start in range(0, n_rows, BLOCK):", "    r = start + offs", "    valid = r < n_rows"]
        for (node, red), acc in zip(fulls, accs):
            self.helpers |= acc.helpers
            self.params[f"{acc.name}_part_ptr"] = f"part_{acc.name}"
            self.code += acc.init("[BLOCK]")
            part = f"tl.load({acc.name}_part_ptr + r, mask=valid, other={identity(acc.op, acc.dtype)})"
            loop += ["    " + line for line in acc.update(Var(part), None, False)]
        self.code += loop
        for (node, red), acc in zip(fulls, accs):
            self.code += acc.finish(axis=0, keep=False)
            value = acc.result()
            if red.kind == "mean":
                count = "numel" if self.plan.cv[red.source] else "n_rows"
                self.sizes.add(count)
                self.code.append(f"{safe(node.name)} = {value} / {count}")
                value = Var(safe(node.name))
            self.memo[node] = value

    def compute(self, node: Node) -> Var:
        expr = render(self.plan, node, self.value, self.ORDER, self.sizes, self.helpers)
        self.code.append(f"{safe(node.name)} = {expr}")
        return Var(safe(node.name))
