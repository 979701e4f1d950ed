"""The row kernel of a row-wise Plan, whatever the language: which column passes it makes and what
each computes. A backend's subclass (backends/<name>/emit/rowwise/) supplies the text: its
accumulators, its column loop, loads, stores and locals.

Reductions run in passes over the columns, one pass per reduction depth (softmax: the max; then
sum(exp(x - max)); then the write), each pass re-computing its elementwise input from loads instead
of keeping it in scratch memory. A row value (one per row: a reduction's result, an input that
broadcasts along the row) is computed once per row, outside the column loops; a column value once
per column of the current loop. Outputs that vary along the row are stored in a last pass, the
row outputs and the full reductions' per-row partials after it; a finish kernel combines those
partials, and FinishValues computes its 0-d values."""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Protocol

from torch.fx import Node

from opforge.codegen.exprs import Var
from opforge.codegen.families.rowwise.layout import (ALIASES, CONSTANTS, FLIP, GETITEM, SHAPE_VIEWS, Output, Plan,
                                                     Reduce, constant)


class Accumulator(Protocol):
    """One accumulator of a column pass: a backend's, with its own text."""

    name: str  # the row value it produces
    key: tuple[str, Node]  # ("value" | "mean" | "partial", node) the result is recorded under

    def result(self): ...


class FinishValues(ABC):
    """The finish kernel's 0-d values, whatever the language: a constant, a view of another value, or
    an elementwise node a backend's subclass writes (`compute`). Subclasses set plan and memo (the
    full reductions' combined values to start with)."""

    plan: Plan
    memo: dict[Node, object]

    def value(self, node: Node):
        if node not in self.memo:
            target = str(node.target)
            if target in CONSTANTS:
                self.memo[node] = constant(node)
            elif target in SHAPE_VIEWS | ALIASES:
                self.memo[node] = self.value(node.args[0])
            else:
                self.memo[node] = self.compute(node)
        return self.memo[node]

    @abstractmethod
    def compute(self, node: Node) -> Var:
        """One elementwise node of 0-d values (its inputs through self.value), bound to a local."""


class RowKernelWriter(ABC):
    """Writes one row kernel: passes over the columns, then stores. Subclasses write the text."""

    def __init__(self, plan: Plan, name: str) -> None:
        self.plan, self.name = plan, name
        self.code: list[str] = []  # row-level lines (row values, accumulator set-up, column loops)
        self.body: list[str] | None = None  # the current column loop's lines
        self.row_memo: dict[Node, object] = {}
        self.col_memo: dict[tuple[Node, bool], object] = {}
        self.sizes: set[str] = set()
        self.done: dict[tuple[str, Node], object] = {}  # finished accumulators: value, mean, partial

    # -- the kernel ---------------------------------------------------------------------------------

    def write(self, outputs: list[tuple[int, Output]], partials: list[Node]):
        """The kernel storing `outputs` and the per-row partials of the full reductions `partials`."""
        roots = [o.node for _, o in outputs] + [self.plan.reduces[n].source for n in partials]
        passes = self.schedule(roots, partials)
        for depth in sorted(passes):
            self._pass(depth, passes[depth])
        cols = [(i, o) for i, o in outputs if o.kind == "cols"]
        if cols:
            self._loop("write pass: " + ", ".join(o.node.name for _, o in cols),
                       lambda: [self.store_cols(i, o) for i, o in cols])
        for i, o in outputs:
            if o.kind == "row":
                self.store_row_output(i, o)
        for node in partials:
            self.store_partial(node)
        return self.text()

    def schedule(self, roots: list[Node], partials: list[Node]) -> dict[int, list[Accumulator]]:
        """Accumulators grouped by pass: a reduction runs one pass after everything its input needs."""
        depth: dict[Node, int] = {}
        passes: dict[int, list[Accumulator]] = {}

        def visit(node: Node) -> int:
            if node in depth:
                return depth[node]
            if self.plan.scope.get(node) == "global" or self.plan.is_leaf(node):
                depth[node] = 0
                return 0
            red = self.plan.reduces.get(node)
            before = max((visit(a) for a in node.all_input_nodes), default=0)
            if red is not None:
                accs = self.accumulators(node, red)
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
                for k, acc in enumerate(self.partial_accs(node, red)):
                    passes.setdefault(visit(red.source) + 1 + k, []).append(acc)
        return passes

    def _pass(self, depth: int, accs: list[Accumulator]) -> None:
        self._loop(f"pass {depth} over the columns: " + ", ".join(a.name for a in accs), lambda: self.fold(accs))
        for acc in accs:
            self.code += self.finish(acc)
            self.done[acc.key] = acc.result()
            if acc.key[0] == "value":
                self.row_memo[acc.key[1]] = acc.result()

    def _loop(self, comment: str, fill: Callable[[], object]) -> None:
        """A column loop: `fill` writes its body (self.body); row values it needs go before it."""
        self.code.append(self.comment(comment))
        self.col_memo, self.body = {}, []
        fill()
        body, self.body = self.body, None
        self.code += self.column_loop(body)

    def partial_value(self, node: Node):
        """A full reduction's per-row partial: its pass's result, or its source when that is a row value."""
        return self.done.get(("partial", node)) or self.row(self.plan.reduces[node].source)

    # -- values -------------------------------------------------------------------------------------

    def row(self, node: Node):
        """A value that is the same along the row: emitted once per row, outside the column loops."""
        if node not in self.row_memo:
            self.row_memo[node] = self._row(node)
        return self.row_memo[node]

    def _row(self, node: Node):
        target = str(node.target) if node.op == "call_function" else None
        if self.plan.is_leaf(node):
            return self.load_row(node)
        if self.plan.scope[node] == "global":
            return self.global_value(node)
        if target in CONSTANTS:
            return constant(node)
        if target == GETITEM:
            return self.row(node.args[0])[node.args[1]]
        if target in SHAPE_VIEWS | ALIASES or target == FLIP:
            return self.row(node.args[0])
        if node in self.plan.reduces:
            raise AssertionError(f"{node.name} used before its pass")
        return self.assign(self.code, node.name, self.expr(node, self.row))

    def col(self, node: Node, rev: bool = False):
        """A value per column of the current loop (`rev`: at the mirrored column)."""
        if not self.plan.cv[node]:
            return self.row(node)
        key = (node, rev)
        if key not in self.col_memo:
            self.col_memo[key] = self._col(node, rev)
        return self.col_memo[key]

    def _col(self, node: Node, rev: bool):
        target = str(node.target) if node.op == "call_function" else None
        if self.plan.is_leaf(node):
            return self.load_col(node, rev)
        if target == FLIP:
            return self.col(node.args[0], not rev)
        if target in SHAPE_VIEWS | ALIASES:
            return self.col(node.args[0], rev)
        if target == GETITEM:  # a cummax's values or indices
            return self.col(node.args[0], rev)[node.args[1]]
        if node in self.plan.scans:
            return self.scan(node)
        return self.assign(self.body, node.name + ("_rev" if rev else ""), self.expr(node, lambda a: self.col(a, rev)))

    # -- the language's text (a backend's subclass) -------------------------------------------------

    @abstractmethod
    def accumulators(self, node: Node, red: Reduce) -> list[Accumulator]:
        """The accumulators of one row reduction, in pass order (var/std: the mean, then the deviations)."""

    @abstractmethod
    def partial_accs(self, node: Node, red: Reduce) -> list[Accumulator]:
        """The accumulators of a full reduction's per-row partials, in pass order."""

    @abstractmethod
    def fold(self, accs: list[Accumulator]) -> None:
        """One pass's accumulators: their set-up into self.code, their updates into self.body."""

    @abstractmethod
    def finish(self, acc: Accumulator) -> list[str]:
        """The lines after the column loop that turn an accumulator into its row value."""

    @abstractmethod
    def comment(self, text: str) -> str:
        """`text` as a comment line."""

    @abstractmethod
    def column_loop(self, body: list[str]) -> list[str]:
        """The loop over the row's columns around `body`."""

    @abstractmethod
    def load_row(self, node: Node) -> Var:
        """An input that is the same along the row, loaded once per row."""

    @abstractmethod
    def load_col(self, node: Node, rev: bool) -> Var:
        """An input's value at the loop's column (`rev`: at the mirrored column)."""

    @abstractmethod
    def global_value(self, node: Node):
        """A full reduction's value (or one computed from it) used per row."""

    @abstractmethod
    def scan(self, node: Node):
        """A scan along the row, carried across the loop's column blocks: its value (or values)."""

    @abstractmethod
    def expr(self, node: Node, arg: Callable[[Node], object]) -> str:
        """One elementwise node as an expression; `arg(node)` renders its inputs."""

    @abstractmethod
    def assign(self, lines: list[str], name: str, expr: str) -> Var:
        """`expr` bound to a local named after `name`, appended to `lines`."""

    @abstractmethod
    def store_cols(self, index: int, out: Output) -> None:
        """Output `index`, one value per element, stored in the write pass's loop."""

    @abstractmethod
    def store_row_output(self, index: int, out: Output) -> None:
        """Output `index`, one value per row, stored after the passes."""

    @abstractmethod
    def store_partial(self, node: Node) -> None:
        """A full reduction's per-row partial(s), stored for the finish kernel."""

    @abstractmethod
    def text(self):
        """The kernel's text and parameters, once every line is written."""
