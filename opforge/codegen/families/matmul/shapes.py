"""Symbolic shapes for the matmul family: a dimension is a product of *factors*, runtime sizes the
launcher can name (`x.shape[0]`), so views that merge or split dims replay at any size, not at the
export's. A Tracked value is a tensor variable and the view steps (permute, reshape, expand) that the
launcher replays on it; Sizes renders dims as launcher expressions once expand-introduced factors are
tied to real sizes."""
from __future__ import annotations

import math
from dataclasses import dataclass

from torch.fx import Node

from opforge.codegen.lower import Unsupported, val
from opforge.codegen.views import permutation

IDENTITY = {"aten.clone.default", "aten.contiguous.default", "aten.alias.default", "aten.detach.default",
            "aten.lift_fresh_copy.default"}
RESHAPES = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.unsqueeze.default",
            "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default"}
PERMUTES = {"aten.permute.default", "aten.t.default", "aten.transpose.int"}


class Factor:
    """A runtime size that views move whole. `expr` names it in the launcher; None marks a size an
    expand introduced, resolved later from what it broadcasts against. `size`: at export. Compared
    by identity: two factors of equal export size are still different sizes."""

    def __init__(self, expr: str | None, size: int) -> None:
        self.expr, self.size = expr, size


Dim = tuple  # tuple[Factor, ...]: a dimension is the product of its factors; () is a literal 1


def numel(dims) -> int:
    return math.prod(f.size for f in dims)


@dataclass(frozen=True)
class Step:
    kind: str  # "permute", "reshape", "expand" or "narrow"
    dims: tuple  # the dims after the step
    perm: tuple = ()  # a permute's order; a narrow's (dim, start, length) as launcher expressions


@dataclass(frozen=True)
class Tracked:
    """A value the launcher rebuilds from a tensor variable `base` by replaying `steps`."""

    base: str
    base_dims: tuple
    steps: tuple = ()

    @property
    def dims(self) -> tuple:
        return self.steps[-1].dims if self.steps else self.base_dims

    def then(self, step: Step) -> "Tracked":
        return Tracked(self.base, self.base_dims, self.steps + (step,))


class Sizes:
    """Renders dims as launcher expressions, once expand-introduced factors are tied to real sizes."""

    def __init__(self) -> None:
        self.resolved: dict[Factor, str] = {}
        self.names: dict[Dim, str] = {}  # dims the launcher has a local for (M, N, batch)

    def factor(self, f: Factor) -> str:
        if f.expr is None and f not in self.resolved:
            raise Unsupported("a broadcast size the graph ties to no input")
        return f.expr if f.expr is not None else self.resolved[f]

    def dim(self, d: Dim, names: dict | None = None) -> str:
        names = self.names if names is None else names
        return names[d] if d in names else " * ".join(self.factor(f) for f in d) or "1"

    def unify(self, free: Dim, known: Dim) -> None:
        """Tie a dimension made only of expand-introduced factors to the size of `known`."""
        if not free or any(f.expr is not None or f in self.resolved for f in free):
            return
        if len(free) == len(known):
            self.resolved.update({f: self.factor(g) for f, g in zip(free, known)})
        elif len(free) == 1:
            self.resolved[free[0]] = self.dim(known, {})
        else:
            raise Unsupported("a broadcast that regroups batch dimensions")


def _split(f: Factor, size: int) -> tuple[Factor, Factor]:
    """A factor split into a leading `size`, as the reference wrote it (a head count), and the rest of
    it at run time (`x.shape[2] // 8`, the head dim)."""
    if f.expr is None or f.size % size:
        raise Unsupported(f"a view that splits a broadcast or uneven dimension ({f.size} by {size})")
    return Factor(str(size), size), Factor(f"({f.expr}) // {size}", f.size // size)


def _regroup(dims: tuple, shape: tuple) -> tuple:
    """`view`/`reshape`/`(un)squeeze` as a regrouping of factors in row-major order; a factor larger
    than the dim it starts is split (the heads of [B, T, H*D] viewed [B, T, H, D]), but not the first
    one: its leading size would be the export's batch, not a count the reference wrote."""
    factors = [f for d in dims for f in d if f.size != 1]
    out, i = [], 0
    for size in shape:
        group = []
        while numel(group) < size and i < len(factors):
            if not group and i > 0 and factors[i].size > size > 1:
                factors[i:i + 1] = _split(factors[i], size)
            group.append(factors[i])
            i += 1
        if numel(group) != size:
            raise Unsupported(f"a view that splits a dimension ({[numel(d) for d in dims]} -> {list(shape)})")
        out.append(tuple(group))
    if i != len(factors):
        raise Unsupported(f"a view that drops sizes ({[numel(d) for d in dims]} -> {list(shape)})")
    return tuple(out)


def _expand(dims: tuple, shape: tuple) -> tuple:
    def new(size: int) -> Dim:
        return () if size == 1 else (Factor(None, size),)

    lead = len(shape) - len(dims)
    out = [new(s) for s in shape[:lead]]
    for d, s in zip(dims, shape[lead:]):
        if s != numel(d) and numel(d) != 1:
            raise Unsupported(f"an expand of a size-{numel(d)} dimension to {s}")
        out.append(d if s == numel(d) else new(s))
    return tuple(out)


def view(t: Tracked, node: Node) -> Tracked:
    """`t` after one view node."""
    target, shape, rank = str(node.target), tuple(val(node).shape), len(t.dims)
    if target in IDENTITY:
        return t
    if target in PERMUTES:
        perm = permutation(node, rank)
        return t.then(Step("permute", tuple(t.dims[p] for p in perm), tuple(perm)))
    if target == "aten.slice.Tensor":
        return _narrow(t, node)
    if target == "aten.expand.default":
        step = Step("expand", _expand(t.dims, shape))
    elif target in RESHAPES:
        step = Step("reshape", _regroup(t.dims, shape))
    else:
        raise Unsupported(f"{target} between a placeholder and the matmul or its epilogue")
    return t if step.dims == t.dims else t.then(step)


def _bound(value: int, size: int, whole: str) -> str:
    """A slice bound torch.export wrote for one size, as a fraction or an offset of `whole` (views.py's rule)."""
    if value <= 0 or value >= size:
        return "0" if value <= 0 else whole
    for q in range(2, 9):
        if value * q % size == 0:
            return f"{whole} * {value * q // size} // {q}"
    return f"{whole} - {size - value}" if size - value <= 8 else str(value)


def _narrow(t: Tracked, node: Node) -> Tracked:
    """A slice (step 1) of one dim: `chunk`'s q, k and v of a fused projection. The sliced dim is a
    new factor whose size is its length at run time."""
    dim = node.args[1] % len(t.dims)
    d, size = t.dims[dim], numel(t.dims[dim])
    start = node.args[2] if len(node.args) > 2 and node.args[2] is not None else 0
    end = node.args[3] if len(node.args) > 3 and node.args[3] is not None else size
    if (node.args[4] if len(node.args) > 4 else 1) != 1 or any(f.expr is None for f in d):
        raise Unsupported("a slice with a step, or of a broadcast dimension, on a matmul operand")
    start, end = (min(max(v + size if v < 0 else v, 0), size) for v in (start, end))
    whole = " * ".join(f"({f.expr})" for f in d) or "1"
    lo, hi = _bound(start, size, whole), _bound(end, size, whole)
    length = Factor(hi if lo == "0" else f"({hi}) - ({lo})", end - start)
    dims = t.dims[:dim] + ((length,) if end - start != 1 else (),) + t.dims[dim + 1:]
    return t.then(Step("narrow", dims, (dim, lo, length.expr)))


def replay(t: Tracked, sizes: Sizes, names: dict | None = None) -> str:
    code = t.base
    for step in t.steps:
        if step.kind == "permute":
            code += f".permute({', '.join(map(str, step.perm))})"
        elif step.kind == "narrow":
            code += f".narrow({', '.join(map(str, step.perm))})"
        else:
            code += f".{step.kind}({', '.join(sizes.dim(d, names) for d in step.dims)})"
    return code


def unreplay(frame: Tracked, sizes: Sizes) -> str:
    """Torch calls taking a tensor of `frame`'s shape back to the shape of the frame's base."""
    befores = [frame.base_dims] + [s.dims for s in frame.steps[:-1]]
    code = ""
    for step, before in reversed(list(zip(frame.steps, befores))):
        if step.kind == "permute":
            code += f".permute({', '.join(str(step.perm.index(i)) for i in range(len(step.perm)))})"
        else:
            code += f".reshape({', '.join(sizes.dim(d) for d in before)})"
    return code
