"""The Triton emitter of the sort family (codegen/families/sort/), MoE routing's two sorts: a row top-k
(sort(...)[..., :k] or topk along the last dim, softmax prologue and renormalising epilogue fused;
sort_topk.py) and a stable counting sort of bounded integer keys with its histogram and scans
(token slots permuted by expert id; sort_counting.py)."""
from __future__ import annotations

from opforge.codegen.candidate import Kernel, model_new
from opforge.backends.triton.emit import sort_counting, sort_topk
from opforge.backends.triton.emit.common import header
from opforge.backends.triton.emit.rowwise import identifier
from opforge.codegen.families.sort import counting, topk
from opforge.codegen.lower import Lowered, Unsupported

SORTS = {"aten.sort.stable", "aten.sort.default", "aten.topk.default"}


def generate(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    """A candidate per tuning configuration; Unsupported names what the sort family cannot take."""
    if "aten.bincount.default" in lowered.ops:
        return _counting(lowered, title, shapes)
    if not SORTS & lowered.ops:
        raise Unsupported("no sort pattern in the graph")
    return _topk(lowered, title, shapes)


def _topk(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    plan = topk.analyse(lowered)
    prefix = "_" + identifier(title)
    launcher = f"{identifier(title)}_topk"
    kernel, _, _ = sort_topk.kernel_source(plan, prefix)

    def render(config: dict) -> str:
        return (header(f"Row top-k kernel for {title}", "sort", lowered) + "import math\n" + kernel
                + sort_topk.launcher_source(plan, prefix, launcher, config["num_warps"])
                + model_new(lowered, launcher, shapes))

    return Kernel("sort", sort_topk.SPACE, render)


def _counting(lowered: Lowered, title: str, shapes: dict) -> Kernel:
    plan = counting.analyse(lowered)
    prefix = "_" + identifier(title)
    launcher = f"{identifier(title)}_counting_sort"
    kernels = sort_counting.kernel_source(plan, prefix)

    def render(config: dict) -> str:
        return (header(f"Counting-sort kernels for {title}", "sort", lowered) + kernels
                + sort_counting.launcher_source(plan, prefix, launcher, config)
                + model_new(lowered, launcher, shapes))

    return Kernel("sort", sort_counting.SPACE, render)
