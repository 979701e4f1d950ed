"""A spec's size constants, found and rewritten in its source, and a bound on a real sizing call.

Size constants are the spec's top-level `name = <integer literal or arithmetic on literals>`
assignments (`batch_size = 4096`, `N = 2048 * 2`, also `batch_size, dim = 4096, 393216` and
`M = N = 4096`), each bound once at the top level. Running a spec
at other sizes rewrites those assignments in the source (line numbers kept) and runs it again as a
fresh module, so every value derived from them follows: `scale_shape = (out_features,)`,
`hidden = 4 * dim`, and whatever `get_inputs()` computes from them. Setting the constants on an
already-run module would leave those at the declared sizes.

Measuring a spec is done on meta tensors where it can be (nothing allocated); a spec whose inputs
are built from data (`int(seq_lens.max())`, a block table from `torch.randperm`) runs for real
under `Bounded`, a dispatch mode that stops it before an allocation would pass a byte or element
limit, or once a time limit has passed (checked at every ATen op: a pure-Python loop that runs
no op is not stopped).
"""
from __future__ import annotations

import ast
import copy
import operator
import time
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
          ast.LShift: operator.lshift}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def literal_int(node: ast.AST) -> int | None:
    """The value of an integer expression made of literals and arithmetic only, else None."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = literal_int(node.operand)
        return None if value is None else (value if isinstance(node.op, ast.UAdd) else -value)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        left, right = literal_int(node.left), literal_int(node.right)
        if left is None or right is None or (type(node.op) in (ast.Pow, ast.LShift) and not 0 <= right <= 64):
            return None
        try:
            return _ARITH[type(node.op)](left, right)
        except ZeroDivisionError:
            return None
    return None


def _stored_names(node: ast.AST) -> set[str]:
    """Names a top-level statement binds in the module's scope (not inside functions or classes)."""
    names: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(item.name)
            continue
        if isinstance(item, _SCOPES):
            continue
        if isinstance(item, ast.Name) and isinstance(item.ctx, (ast.Store, ast.Del)):
            names.add(item.id)
        elif isinstance(item, ast.alias):
            names.add((item.asname or item.name).split(".")[0])
        stack.extend(ast.iter_child_nodes(item))
    return names


def _bindings(stmt: ast.stmt) -> list[tuple[str, ast.expr]] | None:
    """(name, its value expression) for each name a top-level assignment binds from an expression of its
    own: `n = 4096`, `n: int = 4096`, `a, b = 4096, 1024` (names from a tuple or list of the same length)
    and `a = b = 4096`; None for any other statement."""
    if isinstance(stmt, ast.AnnAssign):
        return [(stmt.target.id, stmt.value)] if isinstance(stmt.target, ast.Name) and stmt.value is not None else None
    if not isinstance(stmt, ast.Assign):
        return None
    if all(isinstance(t, ast.Name) for t in stmt.targets):
        return [(t.id, stmt.value) for t in stmt.targets]
    target = stmt.targets[0]
    if len(stmt.targets) == 1 and isinstance(target, (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List)):
        names, values = target.elts, stmt.value.elts
        if len(names) == len(values) and all(isinstance(n, ast.Name) for n in names):
            return [(n.id, v) for n, v in zip(names, values)]
    return None


def size_constants(tree: ast.Module) -> dict[str, int]:
    """The rewritable integer constants of a spec's source, with their values."""
    found: dict[str, int] = {}
    other: set[str] = {name for node in ast.walk(tree) if isinstance(node, (ast.Global, ast.Nonlocal))
                       for name in node.names}
    for stmt in tree.body:
        pairs = _bindings(stmt) or []
        values = {name: literal_int(value) for name, value in pairs}
        if not pairs or len(values) < len(pairs) or None in values.values() or found.keys() & values.keys():
            other |= _stored_names(stmt)
        else:
            found.update(values)
    return {k: v for k, v in found.items() if k not in other}


def with_sizes(tree: ast.Module, sizes: dict[str, int]) -> ast.Module:
    """A copy of `tree` whose size constants in `sizes` are assigned those values instead (names
    that are not size constants are ignored: an older verdict may list derived values)."""
    constants = size_constants(tree)
    wanted = {k: int(v) for k, v in sizes.items() if k in constants and v != constants[k]}
    body = []
    for stmt in tree.body:
        pairs = _bindings(stmt) or []
        body.extend(_rebound(stmt, pairs, wanted) if any(name in wanted for name, _ in pairs) else [stmt])
    return ast.fix_missing_locations(ast.Module(body=body, type_ignores=tree.type_ignores))


def _rebound(stmt: ast.Assign | ast.AnnAssign, pairs: list[tuple[str, ast.expr]], wanted: dict[str, int]) -> list[ast.stmt]:
    """`stmt` with each of its names in `wanted` assigned that value; a chained `a = b = n` becomes one
    assignment per name (on the same line)."""
    def value(name: str, old: ast.expr) -> ast.expr:
        return ast.copy_location(ast.Constant(wanted[name]), old) if name in wanted else old

    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], (ast.Tuple, ast.List)):
        new = copy.copy(stmt)
        new.value = copy.copy(stmt.value)
        new.value.elts = [value(name, old) for name, old in pairs]
        return [new]
    out = []
    for (name, old), target in zip(pairs, stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
        new = copy.copy(stmt)
        if isinstance(new, ast.Assign):
            new.targets = [target]
        new.value = value(name, old)
        out.append(new)
    return out


class SizeLimit(Exception):
    """A bounded sizing call went past its memory or time limit (the spec is too large to measure
    this way at these sizes, which is not the same as broken)."""


class Bounded(TorchDispatchMode):
    """Runs a spec's own code for real, stopping it before an op's fresh outputs would take the
    allocations past `max_bytes` (or `max_elements`), or once `seconds` have passed. Storages are
    counted once each by address, so views are free and a freed buffer's reuse is not counted twice."""

    def __init__(self, max_bytes: int, max_elements: int | None, seconds: float) -> None:
        super().__init__()
        self.max_bytes, self.max_elements, self.seconds = max_bytes, max_elements, seconds
        self.deadline = time.monotonic() + seconds
        self.storages: dict[int, tuple[int, int]] = {}  # address -> (bytes, elements)
        self.total = (0, 0)

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # as guards.ForwardGuard: no wrapper that imports torch._dynamo (1.5 s) on the first op

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if time.monotonic() > self.deadline:
            raise SizeLimit(f"it ran longer than {self.seconds:g} s")
        for t in _tensor_leaves((args, kwargs)):
            self.storages.setdefault(_address(t), (0, 0))
        fresh = _fresh_on_meta(func, args, kwargs) or []
        self._check(sum(t.numel() * t.element_size() for t in fresh), sum(t.numel() for t in fresh))
        out = func(*args, **kwargs)
        for t in _tensor_leaves(out):
            self._count(t)
        self._check(0, 0)
        return out

    def _count(self, t: torch.Tensor) -> None:
        key = _address(t)
        old = self.storages.get(key, (0, 0))
        new = _size(t)
        if new[0] > old[0]:
            self.storages[key] = new
            self.total = (self.total[0] + new[0] - old[0], self.total[1] + new[1] - old[1])

    def _check(self, extra_bytes: int, extra_elements: int) -> None:
        if self.total[0] + extra_bytes > self.max_bytes:
            raise SizeLimit(f"it allocates more than {self.max_bytes / 2**30:.1f} GiB")
        if self.max_elements is not None and self.total[1] + extra_elements > self.max_elements:
            raise SizeLimit(f"it allocates more than {self.max_elements} elements")


def _tensor_leaves(tree: Any) -> list[torch.Tensor]:
    return [x for x in tree_flatten(tree)[0] if isinstance(x, torch.Tensor)]


def _address(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr() if t.device.type != "meta" else id(t)
    except (RuntimeError, NotImplementedError):  # no plain storage (sparse, say)
        return id(t)


def _size(t: torch.Tensor) -> tuple[int, int]:
    """(bytes, elements) of a tensor's storage; a meta tensor takes none."""
    if t.device.type == "meta":
        return 0, 0
    try:
        nbytes = t.untyped_storage().nbytes()
    except (RuntimeError, NotImplementedError):
        nbytes = t.numel() * t.element_size()
    return nbytes, nbytes // max(t.element_size(), 1)


def _fresh_on_meta(func, args: tuple, kwargs: dict) -> list[torch.Tensor] | None:
    """The op's newly allocated outputs, run on meta tensors (shapes only), or None where they
    cannot be known up front (a size that depends on values, an op with no meta kernel)."""
    def meta(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
        return x

    schema = func._schema
    takes_device = any(a.name == "device" and a.kwarg_only for a in schema.arguments)
    if not takes_device and not _tensor_leaves((args, kwargs)):
        return None
    meta_kwargs = tree_map(meta, kwargs)
    if takes_device:
        meta_kwargs["device"] = torch.device("meta")
    try:
        result = func(*tree_map(meta, args), **meta_kwargs)
    except Exception:  # data-dependent or no meta kernel: counted once it has run
        return None
    outs = result if len(schema.returns) > 1 else (result,)
    return [t for ret, o in zip(schema.returns, outs) if ret.alias_info is None for t in _tensor_leaves(o)]
