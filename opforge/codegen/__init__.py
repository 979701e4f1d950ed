"""The offline expert's compiler: a PyTorch reference lowered to core ATen with torch.export
(lower.py), read by one family's plan (families/: pointwise, rowwise, matmul, window), written by one
emitter per backend (each backend folder's emit/, listed in its EMITTERS). A graph no single emitter takes
is cut into groups, one kernel each, spliced into one candidate (partition/). Anything else is
reported as Unsupported, naming the ATen ops, so an LLM drafter can take over.

    kernel = generate(spec_source, op, sizes)   # the default backend; backend=NAME for another
    source = kernel.render(kernel.space[0])   # one candidate file per tuning configuration"""
from __future__ import annotations

import importlib
import tempfile
from functools import lru_cache
from pathlib import Path

from opforge.codegen import dtypes, partition
from opforge.codegen.candidate import Kernel
from opforge.backends import BACKENDS, DEFAULT
from opforge.codegen.lower import Lowered, Unsupported, lower, state_shapes

__all__ = ["Kernel", "Unsupported", "emitters", "generate"]


def emitters(backend: str):
    """A backend's emit package (its EMITTERS in the order they are tried), None when it has none."""
    row = BACKENDS.get(backend)
    return row.part("emit") if row is not None else None


@lru_cache(maxsize=32)
def _lowered(spec_source: str, sizes: tuple, dtypes: tuple | None = None) -> tuple[Lowered, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.py"
        path.write_text(spec_source)
        return lower(path, dict(sizes), dtypes), state_shapes(path, dict(sizes))


def generate(spec_source: str, op: str, sizes: dict, backend: str = DEFAULT) -> Kernel:
    """The first emitter's Kernel for this spec on `backend`, else a partitioned program of several;
    Unsupported naming every emitter's reason and the group the partitioner could not write. A spec
    whose input lists use several dtype combinations gets one per combination (codegen/dtypes.py)."""
    package = emitters(backend)
    if package is None:
        have = [name for name in BACKENDS if emitters(name) is not None]
        raise Unsupported(f"no expert emitter for backend {backend!r} (it has {', '.join(have)})")
    combos = dtypes.combinations(spec_source, sizes)
    first = _generate(package, spec_source, op, sizes, None)
    if len(combos) < 2:
        return first
    kernels = [first]
    for combo in combos[1:]:
        try:
            kernels.append(_generate(package, spec_source, op, sizes, combo))
        except Unsupported as exc:
            raise Unsupported(f"input dtypes {combo}: {exc}") from None

    def render(config: dict) -> str:
        at = first.space.index(config) if config in first.space else 0
        return dtypes.merge([k.render(k.space[min(at, len(k.space) - 1)]) for k in kernels], combos)
    return Kernel(family=first.family, space=first.space, render=render, kernels=max(k.kernels for k in kernels))


def _generate(package, spec_source: str, op: str, sizes: dict, combo: tuple | None) -> Kernel:
    """One dtype combination's Kernel (None: the main inputs' own)."""
    lowered, shapes = _lowered(spec_source, tuple(sorted(sizes.items())), combo)
    title = "".join(c if c.isalnum() else "_" for c in op).strip("_") or "op"
    modules = [(name, importlib.import_module(f"{package.__name__}.{name}")) for name in package.EMITTERS]
    reasons = []
    for name, module in modules:
        try:
            return module.generate(lowered, title, shapes)
        except Unsupported as exc:
            reasons.append(f"{name}: {exc}")
    # An emitter that found nothing of its kind ("no pooling op...") says least: its reason goes last.
    reasons.sort(key=lambda r: r.split(": ", 1)[1].startswith("no "))
    single = "; ".join(reasons) or "no emitter available"
    # A backend whose candidate is one project per kernel cannot hold a program of several.
    if (single_kernel := getattr(package, "SINGLE_KERNEL", None)) is not None:
        raise Unsupported(f"{single}; partitioner: {single_kernel}")
    try:
        return partition.generate(lowered, title, shapes, modules)
    except Unsupported as exc:
        raise Unsupported(f"{single}; partitioner: {exc}") from None
