"""What a candidate keeps between calls, so a result can be shown not to depend on the call count.

A kernel right for its first 64 calls and wrong afterwards passes any finite number of checked
calls below 64 (the CPU run makes about 47). Calling more, or at secret offsets, only moves the
number. Instead the candidate's process proves that nothing the candidate can reach changes across
calls on identical inputs: after each repeated call (the plan's `repeat` steps, the same inputs
every time) it takes `state_map` of everything candidate code can reach, and two consecutive
repeated calls must leave the same map. If they do, every later call starts from the same state
with the same inputs, so the call count cannot select what it computes. `global`/`nonlocal` and
attribute stores outside a method's own `self` are refused statically, threads and processes at run
time. Not walked: objects of other libraries' types (a Triton kernel object, an autotuner), whose
caches change at compiles; a count kept inside one would not be seen (the static allow-list decides
what a candidate can reach there).

What is reached: the candidate module's globals, recursively through containers (list, tuple,
dict, set), tensors (shape, dtype and values: integer and bool ones exactly, float ones with their
13 low float32 mantissa bits dropped, about three significant digits, so a workspace holding
atomically added floats that round differently between program orders is the same state and a
float counter is not), functions and classes the candidate defined (defaults, keyword defaults,
closure cells, attributes), instances of its classes and every `nn.Module` (the models:
attributes, parameters, buffers, submodules). Warm-up is allowed: a cache
filled at the first call of a shape, or an autotuner's choice, leaves the map unchanged afterwards.
A state that keeps changing (a counter, a growing list of past inputs) is refused as `stateful`,
naming what changed. Cost: one walk per repeated call (24 on a CPU run): 0.07 ms for the tiny
softmax's candidate, 48 ms for a model holding 262,144 float32 weights (2 loaded cores).
"""
from __future__ import annotations

import functools
import hashlib
import types
from typing import Any

import torch

MAX_ENTRIES = 4096  # a candidate holding more state than this is compared on the first 4096 values
MAX_DEPTH = 8
MAX_ITEMS = 256  # per container
SCALARS = (bool, int, float, complex, str, bytes)


def tensor_digest(t: torch.Tensor) -> str:
    t = t.detach()
    head = f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}"
    if t.numel() == 0:
        return head
    if t.is_floating_point() or t.is_complex():
        t = torch.view_as_real(t) if t.is_complex() else t
        # float32 with its 13 low mantissa bits dropped: 10 bits kept, three significant digits
        t = torch.nan_to_num(t.float(), nan=0.0).view(torch.int32) >> 13
    raw = t.reshape(-1).contiguous().cpu().view(torch.uint8).numpy().tobytes()
    return f"{head}:{hashlib.blake2b(raw, digest_size=8).hexdigest()}"


def _key(key: Any) -> str:
    """A container key in words, without running a candidate's __repr__."""
    if key is None or isinstance(key, (bool, int, float, str, bytes)) and type(key) in (bool, int, float, str, bytes):
        return repr(key)[:40]
    if type(key) is tuple:
        return "(" + ", ".join(_key(k) for k in key) + ")"
    return f"<{type(key).__name__}>"


class _Walk:
    def __init__(self, module_name: str) -> None:
        self.owner = module_name
        self.found: dict[str, str] = {}
        self.seen: set[int] = set()
        self.held: list = []  # what was seen stays alive, so no later object can take a seen id

    def own(self, obj: Any) -> bool:
        return getattr(obj, "__module__", None) == self.owner

    def visit(self, path: str, v: Any, depth: int = 0) -> None:
        if depth > MAX_DEPTH or len(self.found) >= MAX_ENTRIES:
            return
        if v is None or isinstance(v, SCALARS):
            base = next((b for b in SCALARS if isinstance(v, b)), object)
            self.found[path] = base.__repr__(v)[:80]  # a subclass's own __repr__ is not run
            return
        if isinstance(v, torch.Tensor):
            self.found[path] = tensor_digest(v)
            return
        if id(v) in self.seen:
            return
        self.seen.add(id(v))
        self.held.append(v)
        # containers read through their base type's own methods: a subclass's overrides run no code here
        if isinstance(v, (list, tuple)):
            items = list.__getitem__(v, slice(MAX_ITEMS)) if isinstance(v, list) else tuple.__getitem__(v, slice(MAX_ITEMS))
            self.found[f"{path} (length)"] = str(list.__len__(v) if isinstance(v, list) else tuple.__len__(v))
            for i, item in enumerate(items):
                self.visit(f"{path}[{i}]", item, depth + 1)
        elif isinstance(v, dict):
            self.found[f"{path} (length)"] = str(dict.__len__(v))
            for key, item in list(dict.items(v))[:MAX_ITEMS]:
                self.visit(f"{path}[{_key(key)}]", item, depth + 1)
        elif isinstance(v, (set, frozenset)):
            base = set if isinstance(v, set) else frozenset
            self.found[path] = f"{base.__len__(v)} items " + hashlib.blake2b(
                "\x00".join(sorted(_key(x) for x in base.__iter__(v))).encode(), digest_size=8).hexdigest()
        elif isinstance(v, functools.partial):
            self.visit(f"{path}.args", list(v.args), depth + 1)
            self.visit(f"{path}.keywords", dict(v.keywords), depth + 1)
        elif isinstance(v, types.FunctionType):
            if self.own(v):
                self._function(path, v, depth)
        elif isinstance(v, types.MethodType):
            self.visit(f"{path}.__self__", v.__self__, depth + 1)
        elif isinstance(v, type):
            if self.own(v):
                for name, item in list(vars(v).items()):
                    if not (name.startswith("__") and name.endswith("__")):
                        self.visit(f"{path}.{name}", item, depth + 1)
        elif isinstance(v, torch.nn.Module) or (self.own(type(v)) and hasattr(v, "__dict__")):
            for name, item in list(vars(v).items()):
                self.visit(f"{path}.{name}", item, depth + 1)

    def _function(self, path: str, fn: types.FunctionType, depth: int) -> None:
        self.visit(f"{path}.__defaults__", list(fn.__defaults__ or ()), depth + 1)
        self.visit(f"{path}.__kwdefaults__", dict(fn.__kwdefaults__ or {}), depth + 1)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                content = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            self.visit(f"{path} closure {name}", content, depth + 1)
        self.visit(f"{path}.__dict__", dict(vars(fn)), depth + 1)


def state_map(module: types.ModuleType, models: list) -> dict[str, str]:
    """Everything candidate code can reach, as path -> a short value or digest."""
    walk = _Walk(module.__name__)
    for i, model in enumerate(models):
        walk.visit(f"model {i}", model)
    for name, value in list(vars(module).items()):
        if not (name.startswith("__") and name.endswith("__")) and not isinstance(value, types.ModuleType):
            walk.visit(name, value)
    return walk.found


def changed(before: dict[str, str], after: dict[str, str]) -> str | None:
    """The first difference between two state maps, in words; None when they are the same."""
    for path in sorted(before.keys() | after.keys()):
        if before.get(path) != after.get(path):
            return f"{path}: {before.get(path, '(absent)')} -> {after.get(path, '(absent)')}"
    return None
