"""The offline expert's compiler: a PyTorch reference lowered to core ATen with torch.export
(lower.py), read by one family's plan (families/: pointwise, rowwise, matmul, window), written by one
emitter per backend (emit/triton/, emit/cuda/, emit/triton_ascend/). A graph no single emitter takes
is cut into groups, one kernel each, spliced into one candidate (partition/). Anything else is
reported as Unsupported, naming the ATen ops, so an LLM drafter can take over.

    kernel = generate(spec_source, op, sizes, backend="triton")
    source = kernel.render(kernel.space[0])   # one candidate file per tuning configuration"""
from __future__ import annotations

import importlib
import tempfile
from functools import lru_cache
from pathlib import Path

from opforge.codegen import partition
from opforge.codegen.candidate import Kernel
from opforge.backends.ascendc.emit import EMITTERS as ASCENDC_EMITTERS
from opforge.backends.cuda.emit import EMITTERS as CUDA_EMITTERS
from opforge.backends.triton.emit import EMITTERS as TRITON_EMITTERS
from opforge.backends.triton_ascend.emit import EMITTERS as TRITON_ASCEND_EMITTERS
from opforge.codegen.lower import Lowered, Unsupported, lower, state_shapes

__all__ = ["BACKENDS", "Kernel", "Unsupported", "generate"]

# Backends whose candidate is one project per kernel cannot hold a program of several.
SINGLE_KERNEL = {"ascendc": "an AscendC candidate is one kernel project, not a program of several"}
BACKENDS = {"triton": ("opforge.backends.triton.emit", TRITON_EMITTERS),
            "cuda": ("opforge.backends.cuda.emit", CUDA_EMITTERS),
            "triton_ascend": ("opforge.backends.triton_ascend.emit", TRITON_ASCEND_EMITTERS),
            "ascendc": ("opforge.backends.ascendc.emit", ASCENDC_EMITTERS)}


@lru_cache(maxsize=32)
def _lowered(spec_source: str, sizes: tuple) -> tuple[Lowered, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.py"
        path.write_text(spec_source)
        return lower(path, dict(sizes)), state_shapes(path, dict(sizes))


def generate(spec_source: str, op: str, sizes: dict, backend: str = "triton") -> Kernel:
    """The first emitter's Kernel for this spec on `backend`, else a partitioned program of several;
    Unsupported naming every emitter's reason and the group the partitioner could not write."""
    if backend not in BACKENDS:
        raise Unsupported(f"no expert emitter for backend {backend!r} (it has {', '.join(BACKENDS)})")
    lowered, shapes = _lowered(spec_source, tuple(sorted(sizes.items())))
    title = "".join(c if c.isalnum() else "_" for c in op).strip("_") or "op"
    package, emitters = BACKENDS[backend]
    modules = [(name, importlib.import_module(f"{package}.{name}")) for name in emitters]
    reasons = []
    for name, module in modules:
        try:
            return module.generate(lowered, title, shapes)
        except Unsupported as exc:
            reasons.append(f"{name}: {exc}")
    # An emitter that found nothing of its kind ("no pooling op...") says least: its reason goes last.
    reasons.sort(key=lambda r: r.split(": ", 1)[1].startswith("no "))
    single = "; ".join(reasons) or "no emitter available"
    if backend in SINGLE_KERNEL:
        raise Unsupported(f"{single}; partitioner: {SINGLE_KERNEL[backend]}")
    try:
        return partition.generate(lowered, title, shapes, modules)
    except Unsupported as exc:
        raise Unsupported(f"{single}; partitioner: {exc}") from None
