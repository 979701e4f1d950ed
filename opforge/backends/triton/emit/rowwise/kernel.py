"""The Triton source of a row-wise Plan.

Row kernel: one program per ROWS rows. Reductions run in passes over the columns, one pass per
reduction depth (softmax: max; then sum(exp(x - max)); then the write), each pass re-computing its
elementwise input from loads instead of keeping it in scratch memory. Row values are [ROWS, 1].
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
from opforge.codegen.exprs import Var
from opforge.codegen.families.rowwise.layout import (ALIASES, CONSTANTS, FLIP, GETITEM, MOMENTS, SHAPE_VIEWS, Output, Plan,
                                                     constant)
from opforge.codegen.lower import Unsupported, val

def write(plan: Plan, writer: Callable[[Plan, str], RowWriter] | None = None) -> list[KernelText]:
    """The kernels in launch order: row, then finish and apply when there are full reductions.
    `writer(plan, name)`: the row and apply kernels' writer (a backend's RowWriter subclass)."""
    writer = writer or RowWriter
    fulls = [n for n, r in plan.reduces.items() if r.full]
    early = [(i, o) for i, o in enumerate(plan.outputs) if o.kind != "scalar" and not o.late]
    late = [(i, o) for i, o in enumerate(plan.outputs) if o.kind != "scalar" and o.late]
    kernels = [writer(plan, f"_{plan.title}_row_kernel").write(early, fulls)]
    if fulls:
        apply = writer(plan, f"_{plan.title}_apply_kernel").write(late, []) if late else None
        kernels.append(FinishWriter(plan, f"_{plan.title}_finish_kernel").write(apply.globals if apply else {}))
        kernels += [apply] if apply else []
    return kernels


class RowWriter:
    """Writes one row kernel: passes over the columns, then stores. A subclass changes how programs
    map to rows (`_program`) and whether column strides are 1 by contract (UNIT_COLS)."""

    CONSTEXPRS = ("BLOCK: tl.constexpr", "ROWS: tl.constexpr")
    UNIT_COLS = False  # True: the launcher passes every column-varying input with column stride 1

    def __init__(self, plan: Plan, name: str) -> None:
        self.plan, self.name = plan, name
        self.code: list[str] = []  # kernel-level lines (row values, accumulator set-up)
        self.body: list[str] | None = None  # the current column loop's lines
        self.row_memo: dict[Node, object] = {}
        self.col_memo: dict[tuple[Node, bool], object] = {}
        self.params: dict[str, str] = {}
        self.helpers: set[str] = set()
        self.globals: dict[Node, int] = {}
        self.sizes: set[str] = set()
        self.rev_used = False
        self.done: dict[tuple[str, Node], object] = {}  # finished accumulators: value, mean, partial

    # -- the kernel ---------------------------------------------------------------------------------

    def write(self, outputs: list[tuple[int, Output]], partials: list[Node]) -> KernelText:
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
                self._store_row(f"out{i}_ptr", f"out{i}", self.row(o.node))
        for node in partials:
            red = self.plan.reduces[node]
            if red.kind in MOMENTS:  # var/std: the row's mean too (the plan makes their source col-varying)
                mean = Var(f"({self.done[('mean', node)]} + {safe(node.name)}_part_shift)")
                self._store_row(f"{safe(node.name)}_mean_part_ptr", f"part_{safe(node.name)}_mean", mean)
            value = self.done.get(("partial", node)) or self.row(red.source)
            self._store_row(f"{safe(node.name)}_part_ptr", f"part_{safe(node.name)}", value)
        return self._text()

    def _text(self) -> KernelText:
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
                accs = accumulators(node, red, safe(node.name))
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
                for k, acc in enumerate(partial_accs(node, red, safe(node.name) + "_part")):
                    passes.setdefault(visit(red.source) + 1 + k, []).append(acc)
        return passes

    def _pass(self, depth: int, accs: list[Acc]) -> None:
        what = ", ".join(a.name for a in accs)
        first: dict[tuple, Acc] = {}
        for acc in accs:  # LayerNorm's decomposition sums x for its mean and again for its variance
            twin = first.setdefault((acc.op, acc.source, acc.dtype, acc.center, acc.index), acc)
            acc.tile = twin.tile

        def fill() -> None:
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

        self._loop(f"pass {depth} over the columns: {what}", fill)
        for acc in accs:
            self.code += acc.finish(axis=1, keep=True)
            self.done[acc.key] = acc.result()
            if acc.key[0] == "value":
                self.row_memo[acc.key[1]] = acc.result()

    def _loop(self, comment: str, fill) -> None:
        self.code.append(f"# {comment}")
        self.col_memo, self.body, self.rev_used = {}, [], False
        fill()
        body, self.body = self.body, None
        self.code += ["for start in range(0, n_cols, BLOCK):", "    c = start + cols",
                      "    mask = row_mask & (c < n_cols)"]
        self.code += ["    c_rev = n_cols - 1 - c  # flipped along the row"] if self.rev_used else []
        self.code += ["    " + line for line in body]

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

    def row(self, node: Node):
        """A value that is the same along the row: emitted once, outside the column loops."""
        if node not in self.row_memo:
            self.row_memo[node] = self._row(node)
        return self.row_memo[node]

    def _row(self, node: Node):
        target = str(node.target) if node.op == "call_function" else None
        if self.plan.is_leaf(node):
            p = self._tensor_param(node, cv=False)
            return self._assign(self.code, node.name, f"tl.load({p}_ptr + rows * {p}_sr, mask=row_mask, "
                                                      f"other={self._other(node)}){self._upcast(node)}")
        if self.plan.scope[node] == "global":
            self.globals.setdefault(node, len(self.globals))
            self.params["glob_ptr"] = "glob"
            return self._assign(self.code, node.name, f"tl.load(glob_ptr + {self.globals[node]})")
        if target in CONSTANTS:
            return constant(node)
        if target == GETITEM:
            return self.row(node.args[0])[node.args[1]]
        if target in SHAPE_VIEWS | ALIASES or target == FLIP:
            return self.row(node.args[0])
        if node in self.plan.reduces:
            raise AssertionError(f"{node.name} used before its pass")
        return self._assign(self.code, node.name, render(self.plan, node, self.row, ("n_cols",), self.sizes,
                                                                  self.helpers))

    def col(self, node: Node, rev: bool):
        """A value per element of the current column block (`rev`: at the mirrored column)."""
        if not self.plan.cv[node]:
            return self.row(node)
        key = (node, rev)
        if key not in self.col_memo:
            self.col_memo[key] = self._col(node, rev)
        return self.col_memo[key]

    def _col(self, node: Node, rev: bool):
        target = str(node.target) if node.op == "call_function" else None
        suffix = "_rev" if rev else ""
        if self.plan.is_leaf(node):
            p = self._tensor_param(node, cv=True)
            self.rev_used |= rev
            index = "c_rev" if rev else "c"
            if node in self.plan.partial:  # repeats along part of the row: the column it repeats
                self.params[f"{p}_inner"] = f"{view_name(node)}_inner"
                index = f"({index} // {p}_inner)" if self.plan.partial[node][1] else f"({index} % {p}_inner)"
            return self._assign(self.body, node.name + suffix,
                                f"tl.load({p}_ptr + rows * {p}_sr + {self._col_offset(p, index)}, mask=mask, "
                                f"other={self._other(node)}){self._upcast(node)}")
        if target == FLIP:
            return self.col(node.args[0], not rev)
        if target in SHAPE_VIEWS | ALIASES:
            return self.col(node.args[0], rev)
        if target == GETITEM:  # a cummax's values or indices
            return self.col(node.args[0], rev)[node.args[1]]
        if node in self.plan.scans:
            return self._scan(node)
        expr = render(self.plan, node, lambda a: self.col(a, rev), ("n_cols",), self.sizes, self.helpers)
        return self._assign(self.body, node.name + suffix, expr)

    def _scan(self, node: Node):
        """A scan along the row (scans.py): its value, or its (values, indices) names."""
        name, v = safe(node.name), val(node)
        dtype = (v if isinstance(v, torch.Tensor) else v[0]).dtype
        setup, body, value = scan_lines(self.plan.scans[node], name, self.col(node.args[0], False), dtype)
        self.code += setup
        self.body += body
        self.helpers |= {self.plan.scans[node]} & SCAN_HELPERS.keys()
        return tuple(Var(x) for x in value) if isinstance(value, tuple) else Var(value)

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

    def _store_cols(self, index: int, out: Output) -> None:
        rev = not self._oriented(out.node, False)
        self._orient(out.node, rev)
        value = self.col(out.node, rev)
        self.rev_used |= rev
        ptr = self._out_param(f"out{index}_ptr", f"out{index}")
        self.body.append(f"tl.store({ptr} + rows * n_cols + {'c_rev' if rev else 'c'}, "
                         f"{lit(value)}.to({ptr}.dtype.element_ty), mask=mask)")

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

    @staticmethod
    def _assign(lines: list[str], name: str, expr: str) -> Var:
        var = safe(name)
        lines.append(f"{var} = {expr}")
        return Var(var)
