"""Accumulators of the row-wise kernels: one per reduction (two for var/std), each with its identity,
its per-block update, and the cross-lane finish; plus the @triton.jit helpers they call.

Lanes accumulate a [ROWS, BLOCK] tile across column blocks and are combined once at the end (a tree
reduction, more accurate than a running scalar). Masked lanes take the identity, so padding never
reaches a max, a product or a variance."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch.fx import Node

from opforge.backends.triton.emit.exprs import TL_DTYPES, lit
from opforge.codegen.exprs import Var
from opforge.codegen.families.rowwise.layout import COMBINE, MOMENTS, acc_dtype

LABELS = {"max": "amax", "min": "amin", "sumsq": "sum of squared deviations", "pick": "gather (the index's column)"}

HELPERS = {
    "max": '''@triton.jit
def _max_nan(a, b):
    # NaN wins, as in torch.amax (tl.maximum alone drops it on the GPU)
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)
''',
    "min": '''@triton.jit
def _min_nan(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)
''',
}
ARG_HELPER = '''@triton.jit
def _{op}_step(best, best_idx, value, idx, valid):
    """Per lane: the running {word} and the first column holding it (NaN counts as the {word}, as in torch)."""
    take = valid & ((best_idx < 0) | (value {cmp} best) | ((value != value) & (best == best)))
    return tl.where(take, value, best), tl.where(take, idx, best_idx)


@triton.jit
def _{op}_finish(best, best_idx):
    """The row's {word} and its first index from the per-lane state: ties go to the lowest column."""
    nan = best != best
    any_nan = tl.max(nan.to(tl.int32), axis=1, keep_dims=True) > 0
    top = tl.{red}(tl.where(best_idx >= 0, best, {far}), axis=1, keep_dims=True)
    hit = tl.where(any_nan, nan, best == top) & (best_idx >= 0)
    idx = tl.min(tl.where(hit, best_idx, 2147483647), axis=1, keep_dims=True)
    return tl.where(any_nan, float("nan"), top), idx
'''
HELPERS["argmax"] = ARG_HELPER.format(op="argmax", word="max", cmp=">", red="max", far='float("-inf")')
HELPERS["argmin"] = ARG_HELPER.format(op="argmin", word="min", cmp="<", red="min", far='float("inf")')


@dataclass
class Acc:
    """One accumulator of a column pass and the row value it finishes into."""

    name: str  # the row value it produces
    op: str  # sum sumsq max min prod any all argmax argmin
    source: Node
    dtype: torch.dtype
    label: str  # for the fusion comment
    key: tuple[str, Node] | None = None  # ("value" | "mean" | "partial", node) the result is recorded under
    center: Node | None = None  # sumsq: the var/std node whose mean is subtracted
    index: Node | None = None  # pick: the row value naming the column to take
    post: str = "{r}"  # turns the reduced accumulator into the value
    pair: bool = False  # argmax of aten.max.dim: the value is (max, index)
    helpers: set[str] = field(default_factory=set)
    tile: str = ""  # the [ROWS, BLOCK] accumulator; another Acc's when both accumulate the same values

    def __post_init__(self) -> None:
        self.tile = self.tile or f"acc_{self.name}"

    @property
    def index_tile(self) -> str:
        return "idx_" + self.tile.removeprefix("acc_")

    def init(self, shape: str) -> list[str]:
        lines = [f"{self.tile} = tl.full({shape}, {identity(self.op, self.dtype)}, dtype={TL_DTYPES[self.dtype]})"]
        if self.op in ("argmax", "argmin"):
            lines.append(f"{self.index_tile} = tl.full({shape}, -1, dtype=tl.int32)")
        if self.op == "m2":
            lines.append(f"dsum_{self.name} = tl.zeros({shape}, dtype={TL_DTYPES[self.dtype]})")
        return lines

    def update(self, value, mask: str | None, cast: bool, center=None, index=None) -> list[str]:
        """Fold one block into the tile; `mask=None` when masked-off lanes already hold the identity."""
        v = f"{lit(value)}.to({TL_DTYPES[self.dtype]})" if cast else lit(value)
        a, ident = self.tile, identity(self.op, self.dtype)
        if self.op in ("sumsq", "m2"):
            d = f"d_{self.name}"
            lines = [f"{d} = tl.where({mask}, {v} - {lit(center)}, 0.0)", f"{a} += {d} * {d}"]
            return lines + [f"dsum_{self.name} += {d}"] * (self.op == "m2")
        if self.op == "pick":  # only the index's lane adds its value: exact, whatever the others hold
            return [f"{a} += tl.where({mask} & (c == {lit(index)}), {v}, {ident})"]
        if self.op in ("argmax", "argmin"):
            i = self.index_tile
            return [f"{a}, {i} = _{self.op}_step({a}, {i}, {v}, c, {mask})"]
        if self.op in ("any", "all"):
            v = f"({v} != 0)"
        w = f"tl.where({mask}, {v}, {ident})" if mask else v
        return {
            "sum": [f"{a} += {w}"],
            "prod": [f"{a} *= {w}"],
            "max": [f"{a} = _max_nan({a}, {w})"],
            "min": [f"{a} = _min_nan({a}, {w})"],
            "any": [f"{a} = tl.maximum({a}, {w}.to(tl.int32))"],
            "all": [f"{a} = tl.minimum({a}, {w}.to(tl.int32))"],
        }[self.op]

    def finish(self, axis: int, keep: bool) -> list[str]:
        a, kd = self.tile, ", keep_dims=True" if keep else ""
        if self.op in ("argmax", "argmin"):
            return [f"{self.name}_{self.op[3:]}, {self.name} = _{self.op}_finish({a}, {self.index_tile})"]
        if self.op == "m2":  # the deviations' sum is n * (the mean's rounding error): taken out of M2 and the mean
            return [f"{self.name}_shift = tl.sum(dsum_{self.name}, axis={axis}{kd}) / n_cols",
                    f"{self.name} = tl.sum({a}, axis={axis}{kd}) - {self.name}_shift * {self.name}_shift * n_cols"]
        reduced = {
            "sum": f"tl.sum({a}, axis={axis}{kd})", "sumsq": f"tl.sum({a}, axis={axis}{kd})",
            "pick": f"tl.sum({a}, axis={axis}{kd})",
            "max": self._nan_wins("max", axis, kd), "min": self._nan_wins("min", axis, kd),
            "prod": self._last_of_scan(axis, kd),
            "any": f"tl.max({a}, axis={axis}{kd}) != 0", "all": f"tl.min({a}, axis={axis}{kd}) != 0",
        }[self.op]
        return [f"{self.name} = {self.post.format(r=reduced)}"]

    def _nan_wins(self, op: str, axis: int, kd: str) -> str:
        """tl.max/tl.min across lanes, NaN winning as in torch. The built-in reductions, not tl.reduce
        with _max_nan: the same tree on the GPU, and the interpreter runs them in numpy instead of one
        Python call per element (40x on a 1000-column cross-entropy)."""
        a = self.tile
        plain = f"tl.{op}({a}, axis={axis}{kd})"
        if not self.dtype.is_floating_point:
            return plain
        return f'tl.where(tl.max(({a} != {a}).to(tl.int32), axis={axis}{kd}) > 0, float("nan"), {plain})'

    def _last_of_scan(self, axis: int, kd: str) -> str:
        """The lanes' product as the last lane of their cumprod: a built-in scan, where tl.reduce with
        _mul runs one Python call per element in the interpreter."""
        return last_lane(f"tl.cumprod({self.tile}, axis={axis})", axis, kd)  # row kernel: cols; finish: offs

    def result(self):
        if self.op in ("argmax", "argmin"):
            index = Var(self.name)
            return (Var(f"{self.name}_{self.op[3:]}"), index) if self.pair else index
        return Var(self.name)


def last_lane(scan: str, axis: int, kd: str) -> str:
    """The last lane of a scan, as a built-in sum: a row kernel's [ROWS, BLOCK] tile along axis 1 (its
    lane index is `cols`), or the finish kernel's [BLOCK] along axis 0 (`offs`)."""
    lane = "cols" if axis == 1 else "offs"
    return f"tl.sum(tl.where({lane} == BLOCK - 1, {scan}, 0), axis={axis}{kd})"


def identity(op: str, dtype: torch.dtype) -> str:
    floating = dtype.is_floating_point
    if op in ("max", "argmax"):
        return 'float("-inf")' if floating else str(torch.iinfo(dtype).min if dtype != torch.bool else 0)
    if op in ("min", "argmin"):
        return 'float("inf")' if floating else str(torch.iinfo(dtype).max if dtype != torch.bool else 1)
    if op in ("prod", "all"):
        return "1.0" if floating else "1"
    return "0.0" if floating else "0"


def accumulators(node: Node, red, name: str) -> list[Acc]:
    """The accumulators of one row reduction, in pass order (var/std: the mean, then the deviations)."""
    dtype = acc_dtype(red.kind, red.source, node)
    if red.kind in ("var", "std"):
        divisor = f"(n_cols - {red.correction!r})" if red.correction else "n_cols"
        post = f"tl.sqrt({{r}} / {divisor})" if red.kind == "std" else f"{{r}} / {divisor}"
        return [Acc(f"{name}_mean", "sum", red.source, dtype, "mean", ("mean", node), post="{r} / n_cols"),
                Acc(name, "sumsq", red.source, dtype, f"{red.kind} (two-pass)", ("value", node), center=node,
                    post=post)]
    op = "sum" if red.kind == "mean" else red.kind
    post = "{r} / n_cols" if red.kind == "mean" else "{r}"
    pair = str(node.target) in ("aten.max.dim", "aten.min.dim")
    acc = Acc(name, op, red.source, dtype, LABELS.get(op, red.kind) if op != "sum" else red.kind,
              ("value", node), post=post, pair=pair, index=red.index)
    acc.helpers = {op} if op in ("max", "min", "argmax", "argmin") else set()
    return [acc]


def partial_accs(node: Node, red, name: str) -> list[Acc]:
    """A full reduction's per-row partials in pass order: var/std keep the row's mean and its squared
    deviations from it (M2), which the finish kernel combines exactly (finish.py); the rest one value.
    M2 is the corrected two-pass sum (Chan, Golub and LeVeque 1983, eq. 1.7): sum(d^2) - sum(d)^2 / n
    with d = x - the first pass's mean, whose fp32 rounding (1e-4 for a row of 347 values near 1000)
    would otherwise add n * error^2 (a 8e-5 relative error on a variance of 1e-4)."""
    if red.kind not in MOMENTS:
        return [partial_acc(node, red, name)]
    dtype = acc_dtype(red.kind, red.source, node)
    return [Acc(f"{name}_mean", "sum", red.source, dtype, "mean (per-row partial)", ("mean", node), post="{r} / n_cols"),
            Acc(name, "m2", red.source, dtype, "sum of squared deviations (per-row partial)", ("partial", node),
                center=node)]


def partial_acc(node: Node, red, name: str) -> Acc:
    """A full reduction's per-row partial (a mean's partial is a sum: the count divides once, at the end)."""
    op = COMBINE[red.kind]
    acc = Acc(name, op, red.source, acc_dtype(op, red.source, node), f"{red.kind} (per-row partial)",
              ("partial", node))
    acc.helpers = {op} if op in ("max", "min") else set()
    return acc


def wrap(head: str, args: list[str], tail: str, indent: str = "", width: int = 110) -> str:
    """`head(arg, arg, ...)tail` broken after commas, continuation lines under the first argument."""
    lines, line = [], f"{indent}{head}("
    pad = " " * len(line)
    for i, arg in enumerate(args):
        piece = arg + (", " if i < len(args) - 1 else "")
        if len(line) + len(piece) > width and line.strip() and not line.endswith("("):
            lines.append(line.rstrip())
            line = pad
        line += piece
    return "\n".join(lines + [line + ")" + tail])


def short(target) -> str:
    """`aten.sub.Tensor` -> `sub`, for comments."""
    parts = str(target).split(".")
    return parts[1] if len(parts) > 1 else parts[0]
