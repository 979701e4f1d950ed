"""Dynamic anti-cheat guards, active only inside the worker process while a candidate runs.

- `LaunchLog` records every Triton launch (`kernel[grid](...)`) and can turn launches into no-ops.
  It hooks `KernelInterface.__getitem__` for the duration of a `with` block only: Triton exposes no
  launch hook that fires before compilation, and this is our own throw-away process.
- `ForwardGuard` (a TorchDispatchMode) sees every ATen op the candidate's Python code runs outside
  its launches: allocations (which it fills with a sentinel NaN so unwritten elements show), views
  and copies are allowed; any compute is reported, and so is a cast to a narrower float type.
- `ModuleSnapshot` notices torch, Triton, time or harness functions being replaced.
"""
from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from triton.runtime.jit import KernelInterface

ALLOC = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}
INIT_ALLOC = {"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros", "new_ones",
              "new_full", "fill_", "zero_", "scalar_tensor"}
LAYOUT = {
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "expand", "permute", "transpose",
    "t", "unsqueeze", "squeeze", "unsqueeze_", "squeeze_", "select", "slice", "split", "split_with_sizes",
    "chunk", "unbind", "narrow", "unflatten", "alias", "detach", "lift_fresh", "clone", "copy_",
    "_to_copy", "contiguous", "_local_scalar_dense", "is_same_size", "record_stream", "resolve_conj",
    "resolve_neg", "_has_compatible_shallow_copy_type", "view_as_real", "view_as_complex",
}
FLOAT_BITS = {torch.float64: 64, torch.float32: 32, torch.float16: 16, torch.bfloat16: 16}
# Quiet NaNs with a payload no arithmetic produces: an element still holding one was never written.
SENTINEL_BITS = {torch.float32: (torch.int32, 0x7FE5A5A5), torch.float16: (torch.int16, 0x7E5A),
                 torch.bfloat16: (torch.int16, 0x7FDA), torch.float64: (torch.int64, 0x7FFDEADBEEF5A5A5)}
INT_SENTINEL = -0x5A5A5A5A


@dataclass
class Launch:
    kernel: Any
    name: str
    args: tuple
    kwargs: dict
    grid: Any


class LaunchLog:
    """Counts launches; with `noop=True` records them without running any kernel."""

    def __init__(self, noop: bool = False, guard: "ForwardGuard | None" = None) -> None:
        self.noop = noop
        self.guard = guard
        self.launches: list[Launch] = []
        self._saved = None

    def __enter__(self) -> "LaunchLog":
        self._saved = KernelInterface.__getitem__
        log = self

        def getitem(kernel, grid):
            def launch(*args, **kwargs):
                name = getattr(kernel, "__name__", None) or getattr(getattr(kernel, "fn", None), "__name__", "?")
                log.launches.append(Launch(kernel, str(name), args, kwargs, grid))
                if log.noop:
                    return None
                with log.guard.suspended() if log.guard else _nullcontext():
                    return kernel.run(*args, grid=grid, warmup=False, **kwargs)
            return launch

        KernelInterface.__getitem__ = getitem
        return self

    def __exit__(self, *exc) -> None:
        KernelInterface.__getitem__ = self._saved

    def counts(self) -> dict[str, int]:
        return dict(Counter(launch.name for launch in self.launches))


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def fill_sentinel(tensor: torch.Tensor) -> None:
    if tensor.dtype in SENTINEL_BITS:
        int_dtype, bits = SENTINEL_BITS[tensor.dtype]
        tensor.view(int_dtype).fill_(bits)
    elif tensor.dtype != torch.bool and not tensor.is_complex():
        tensor.fill_(max(INT_SENTINEL, torch.iinfo(tensor.dtype).min))


def count_sentinel(tensor: torch.Tensor) -> int:
    """Elements of `tensor` that still hold the allocation sentinel."""
    t = tensor.detach()
    if t.dtype in SENTINEL_BITS:
        int_dtype, bits = SENTINEL_BITS[t.dtype]
        probe = torch.empty(1, dtype=t.dtype, device=t.device)
        fill_sentinel(probe)
        return int((t.contiguous().view(int_dtype) == probe.view(int_dtype)).sum())
    return 0


@dataclass
class ForwardGuard(TorchDispatchMode):
    """Watches the ATen ops the candidate's own Python code issues (launches excluded)."""

    compute: Counter = field(default_factory=Counter)
    downcasts: list[str] = field(default_factory=list)
    depth: int = 0

    def __post_init__(self) -> None:
        super().__init__()

    def suspended(self) -> "_Suspend":
        return _Suspend(self)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.depth:
            return out
        name = func.overloadpacket.__name__
        if name in ALLOC and isinstance(out, torch.Tensor):
            fill_sentinel(out)
        elif name in ("_to_copy", "copy_"):
            self._check_cast(name, args, kwargs, out)
        elif name not in INIT_ALLOC and name not in LAYOUT:
            self.compute[f"aten.{name}"] += 1
        return out

    def _check_cast(self, name: str, args, kwargs, out) -> None:
        src = args[1] if name == "copy_" else args[0]
        dst = args[0] if name == "copy_" else out
        if not (isinstance(src, torch.Tensor) and isinstance(dst, torch.Tensor)):
            return
        src_bits, dst_bits = FLOAT_BITS.get(src.dtype), FLOAT_BITS.get(dst.dtype)
        if src_bits and (dst_bits is None or dst_bits < src_bits):
            self.downcasts.append(f"{src.dtype} -> {dst.dtype}".replace("torch.", ""))


class _Suspend:
    def __init__(self, guard: ForwardGuard) -> None:
        self.guard = guard

    def __enter__(self):
        self.guard.depth += 1

    def __exit__(self, *exc):
        self.guard.depth -= 1


WATCHED = ("torch", "torch.Tensor", "torch.nn.functional", "torch.nn.Module", "torch.testing", "triton",
           "triton.language", "triton.testing", "time", "harness.compare", "harness.guards", "harness.worker")


def _resolve(path: str) -> Any:
    parts = path.split(".")
    obj = sys.modules.get(parts[0])
    for part in parts[1:]:
        obj = getattr(obj, part, None)
    return obj


class ModuleSnapshot:
    """Identity of every attribute of the modules a cheat would patch (timers, comparisons...)."""

    def __init__(self) -> None:
        import time  # noqa: F401  (make sure it is watched)

        import torch._dynamo  # noqa: F401  (entering a dispatch mode imports it, and it rebinds torch.manual_seed)
        import triton.testing  # noqa: F401
        self.saved = {path: self._ids(_resolve(path)) for path in WATCHED}

    @staticmethod
    def _ids(obj: Any) -> dict[str, int]:
        if obj is None:
            return {}
        items = vars(obj) if isinstance(obj, (ModuleType, type)) else {}
        return {k: id(v) for k, v in list(items.items())}

    def changes(self) -> list[str]:
        changed = []
        for path, before in self.saved.items():
            after = self._ids(_resolve(path))
            changed += [f"{path}.{k}" for k, v in before.items() if after.get(k) != v]
        return changed


def live_threads() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.ident is not None}


def child_processes() -> list[int]:
    """PIDs whose parent is this process (Linux /proc); empty elsewhere."""
    pids = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as fh:
                pids += [int(p) for p in fh.read().split()]
    except OSError:
        return []
    return pids


def storages(value: Any) -> set[int]:
    if isinstance(value, torch.Tensor):
        return {value.untyped_storage().data_ptr()} if value.untyped_storage().nbytes() else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(storages(v) for v in value)) if value else set()
    return set()
