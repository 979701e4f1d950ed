"""The Triton source of a row-wise Plan.

Row kernel: one program per ROWS rows, its passes over the columns scheduled by
codegen/emit/row_kernel.py (softmax: max; then sum(exp(x - max)); then the write), each a loop over
[ROWS, BLOCK] column blocks. Row values are [ROWS, 1].
Finish kernel (finish.py): one program reduces the per-row partials of the full reductions (no
atomics, so the result is deterministic) and computes the 0-d outputs. Apply kernel: a row kernel run
after the finish kernel, for outputs that need a full reduction (x / ||x||_F)."""
from __future__ import annotations

from typing import Callable

import torch
from torch.fx import Node

from opforge.backends.triton.emit.exprs import lit
from opforge.backends.triton.emit.rowwise.accs import Acc, accumulators, partial_accs, short, wrap
from opforge.backends.triton.emit.rowwise.finish import FinishWriter
from opforge.backends.triton.emit.rowwise.scans import HELPERS as SCAN_HELPERS
from opforge.backends.triton.emit.rowwise.scans import scan_lines
from opforge.backends.triton.emit.rowwise.text import KernelText, render, safe, view_name
from opforge.codegen.emit.row_kernel import RowKernelWriter
from opforge.codegen.exprs import Var
from opforge.codegen.families.rowwise.layout import ALIASES, FLIP, MOMENTS, SHAPE_VIEWS, Output, Plan
from opforge.codegen.lower import Unsupported, val


def write(plan: Plan, writer: Callable[[Plan, str], TritonRowWriter] | None = None) -> list[KernelText]:
    """The kernels in launch order: row, then finish and apply when there are full reductions.
    `writer(plan, name)`: the row and apply kernels' writer (a backend's TritonRowWriter subclass)."""
    writer = writer or TritonRowWriter
    fulls = [n for n, r in plan.reduces.items() if r.full]
    early = [(i, o) for i, o in enumerate(plan.outputs) if o.kind != "scalar" and not o.late]
    late = [(i, o) for i, o in enumerate(plan.outputs) if o.kind != "scalar" and o.late]
    kernels = [writer(plan, f"_{plan.title}_row_kernel").write(early, fulls)]
    if fulls:
        apply = writer(plan, f"_{plan.title}_apply_kernel").write(late, []) if late else None
        kernels.append(FinishWriter(plan, f"_{plan.title}_finish_kernel").write(apply.globals if apply else {}))
        kernels += [apply] if apply else []
    return kernels


class TritonRowWriter(RowKernelWriter):
    """Writes one Triton row kernel (the passes: codegen/emit/row_kernel.py). A subclass changes how
    programs map to rows (`_program`) and whether column strides are 1 by contract (UNIT_COLS)."""

    CONSTEXPRS = ("BLOCK: tl.constexpr", "ROWS: tl.constexpr")
    UNIT_COLS = False  # True: the launcher passes every column-varying input with column stride 1
    WIDE_SCANS = True  # float scans carried in float64 (False: a target without fp64, scans.py)

    def __init__(self, plan: Plan, name: str) -> None:
        super().__init__(plan, name)
        self.params: dict[str, str] = {}
        self.helpers: set[str] = set()
        self.globals: dict[Node, int] = {}
        self.rev_used = False  # the current column loop reads at mirrored columns (c_rev)

    def text(self) -> KernelText:
        sizes = ["n_rows", "n_cols"] + sorted(self.sizes - {"n_rows", "n_cols"})
        params = list(self.params.items()) + [(s, s) for s in sizes]
        names = [p for p, _ in params] + list(self.CONSTEXPRS)
        head = ["@triton.jit", wrap(f"def {self.name}", names, ":")]
        source = "\n".join(head + self._program(self.code)) + "\n"
        return KernelText(self.name, source, params, "rows", self.helpers, self.globals)

    def _program(self, code: list[str]) -> list[str]:
        """The kernel's body: one program per ROWS rows."""
        head = ["rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)[:, None]  # [ROWS, 1]",
                "row_mask = rows < n_rows",
                "cols = tl.arange(0, BLOCK)[None, :]  # [1, BLOCK]"]
        return ["    " + line if line else "" for line in head + code]

    # -- accumulators and the column loop -----------------------------------------------------------

    def accumulators(self, node: Node, red) -> list[Acc]:
        return accumulators(node, red, safe(node.name))

    def partial_accs(self, node: Node, red) -> list[Acc]:
        return partial_accs(node, red, safe(node.name) + "_part")

    def fold(self, accs: list[Acc]) -> None:
        first: dict[tuple, Acc] = {}
        for acc in accs:  # LayerNorm's decomposition sums x for its mean and again for its variance
            twin = first.setdefault((acc.op, acc.source, acc.dtype, acc.center, acc.index), acc)
            acc.tile = twin.tile
        for acc in accs:
            if acc.tile != f"acc_{acc.name}":
                continue
            self._orient(acc.source, False)
            self.code += acc.init("[ROWS, BLOCK]")
            self.helpers |= acc.helpers
            source = self.col(acc.source, False)
            center = self.done[("mean", acc.center)] if acc.center is not None else None
            index = self.row(acc.index) if acc.index is not None else None
            self.body += [f"# {acc.name}: {self._chain(acc)}"]
            self.body += acc.update(source, "mask", self._cast(acc), center, index)

    def finish(self, acc: Acc) -> list[str]:
        return acc.finish(axis=1, keep=True)

    def comment(self, text: str) -> str:
        return f"# {text}"

    def column_loop(self, body: list[str]) -> list[str]:
        lines = ["for start in range(0, n_cols, BLOCK):", "    c = start + cols", "    mask = row_mask & (c < n_cols)"]
        lines += ["    c_rev = n_cols - 1 - c  # flipped along the row"] if self.rev_used else []
        self.rev_used = False  # for the next loop
        return lines + ["    " + line for line in body]

    def _chain(self, acc: Acc) -> str:
        cone, seen, stack = [], set(), [acc.source]
        while stack:
            node = stack.pop()
            if node in seen or not self.plan.cv.get(node) or node.op != "call_function" or self.plan.is_leaf(node):
                continue
            seen.add(node)
            if str(node.target) not in SHAPE_VIEWS | ALIASES:
                cone.append(node)
            stack += node.all_input_nodes
        order = {n: i for i, n in enumerate(self.plan.lowered.graph.nodes)}
        ops = [short(n.target) for n in sorted(cone, key=order.get)]
        return "fused: " + " -> ".join(ops + [acc.label]) if ops else f"{acc.label} of {acc.source.name}"

    def _cast(self, acc: Acc) -> bool:
        return self._has_scan(acc.source) or val(acc.source).dtype != acc.dtype

    def _has_scan(self, node: Node) -> bool:
        if node in self.plan.scans:
            return True
        return self.plan.cv.get(node, False) and any(self._has_scan(a) for a in node.all_input_nodes)

    # -- values -------------------------------------------------------------------------------------

    def load_row(self, node: Node) -> Var:
        p = self._tensor_param(node, cv=False)
        return self.assign(self.code, node.name, f"tl.load({p}_ptr + rows * {p}_sr, mask=row_mask, "
                                                 f"other={self._other(node)}){self._upcast(node)}")

    def global_value(self, node: Node) -> Var:
        self.globals.setdefault(node, len(self.globals))
        self.params["glob_ptr"] = "glob"
        return self.assign(self.code, node.name, f"tl.load(glob_ptr + {self.globals[node]})")

    def load_col(self, node: Node, rev: bool) -> Var:
        p = self._tensor_param(node, cv=True)
        self.rev_used |= rev
        index = "c_rev" if rev else "c"
        if node in self.plan.partial:  # repeats along part of the row: the column it repeats
            self.params[f"{p}_inner"] = f"{view_name(node)}_inner"
            index = f"({index} // {p}_inner)" if self.plan.partial[node][1] else f"({index} % {p}_inner)"
        return self.assign(self.body, node.name + ("_rev" if rev else ""),
                           f"tl.load({p}_ptr + rows * {p}_sr + {self._col_offset(p, index)}, mask=mask, "
                           f"other={self._other(node)}){self._upcast(node)}")

    def expr(self, node: Node, arg) -> str:
        return render(self.plan, node, arg, ("n_cols",), self.sizes, self.helpers)

    def scan(self, node: Node):
        """A scan along the row (scans.py): its value, or its (values, indices) names."""
        name, v = safe(node.name), val(node)
        dtype = (v if isinstance(v, torch.Tensor) else v[0]).dtype
        setup, body, value = scan_lines(self.plan.scans[node], name, self.col(node.args[0], False), dtype,
                                         self.WIDE_SCANS)
        self.code += setup
        self.body += body
        self.helpers |= {self.plan.scans[node]} & SCAN_HELPERS.keys()
        return tuple(Var(x) for x in value) if isinstance(value, tuple) else Var(value)

    @staticmethod
    def assign(lines: list[str], name: str, expr: str) -> Var:
        var = safe(name)
        lines.append(f"{var} = {expr}")
        return Var(var)

    def _orient(self, node: Node, rev: bool) -> None:
        if not self._oriented(node, rev):
            raise Unsupported(f"aten.flip puts a scan of {node.name} in reverse")

    def _oriented(self, node: Node, rev: bool) -> bool:
        """Scans run forward along the loop: no scan may be needed at mirrored columns."""
        if not self.plan.cv.get(node) or self.plan.is_leaf(node):
            return True
        if str(node.target) == FLIP:
            return self._oriented(node.args[0], not rev)
        if node in self.plan.scans and rev:
            return False
        return all(self._oriented(a, rev) for a in node.all_input_nodes)

    # -- stores and parameters ----------------------------------------------------------------------

    def store_cols(self, index: int, out: Output) -> None:
        rev = not self._oriented(out.node, False)
        self._orient(out.node, rev)
        value = self.col(out.node, rev)
        self.rev_used |= rev
        ptr = self._out_param(f"out{index}_ptr", f"out{index}")
        self.body.append(f"tl.store({ptr} + rows * n_cols + {'c_rev' if rev else 'c'}, "
                         f"{lit(value)}.to({ptr}.dtype.element_ty), mask=mask)")

    def store_row_output(self, index: int, out: Output) -> None:
        self._store_row(f"out{index}_ptr", f"out{index}", self.row(out.node))

    def store_partial(self, node: Node) -> None:
        if self.plan.reduces[node].kind in MOMENTS:  # var/std: the row's mean too (their source is col-varying)
            mean = Var(f"({self.done[('mean', node)]} + {safe(node.name)}_part_shift)")
            self._store_row(f"{safe(node.name)}_mean_part_ptr", f"part_{safe(node.name)}_mean", mean)
        self._store_row(f"{safe(node.name)}_part_ptr", f"part_{safe(node.name)}", self.partial_value(node))

    def _store_row(self, param: str, buffer: str, value) -> None:
        ptr = self._out_param(param, buffer)
        self.code.append(f"tl.store({ptr} + rows, {lit(value)}.to({ptr}.dtype.element_ty), mask=row_mask)")

    def _out_param(self, param: str, buffer: str) -> str:
        self.params[param] = buffer
        return param

    def _tensor_param(self, node: Node, cv: bool) -> str:
        p = safe(node.name)
        self.params[f"{p}_ptr"] = view_name(node)
        self.params[f"{p}_sr"] = f"{view_name(node)}.stride(0)"
        if cv and not self.UNIT_COLS:
            self.params[f"{p}_sc"] = f"{view_name(node)}.stride(1)"
        return p

    def _col_offset(self, p: str, index: str) -> str:
        return index if self.UNIT_COLS else f"{index} * {p}_sc"

    @staticmethod
    def _other(node: Node) -> str:
        return "0.0" if val(node).dtype.is_floating_point else "0"

    @staticmethod
    def _upcast(node: Node) -> str:
        dtype = val(node).dtype
        return ".to(tl.float32)" if dtype.is_floating_point and dtype.itemsize < 4 else ""
