"""The sizes a spec is exported at (codegen/lower.py), shrunk from the declared ones so the export is
quick, but keeping what the graph's structure reads from them.

Each size constant of 16 or more is shrunk toward EXPORT_SIZE; where one declared constant divides
another, the shrunk one divides it too and stays smaller, and a constant below 16 that divides one
keeps dividing it. Shrinking each to min(size, 48) on its own broke that: GroupNorm's 64 groups of
4096 channels exported as 48 groups of 48, each group one channel, so the graph's split of the
channels into groups was a view adding a size-1 dim, and the row-wise kernel normalised single
elements (every output the norm's bias). Here they export as 48 groups of 96.

A split the export bakes (`[B, C] -> [B, 48, C // 48]`: the leading factor is a literal) still has
the export's group count, not the one the harness runs with; `splits` finds such views, and the
lowering is redone at the harness's own sizes on the meta device (nothing allocated)."""
from __future__ import annotations

import math

from torch.fx import Graph
from torch.fx.experimental.symbolic_shapes import statically_known_true

EXPORT_SIZE = 48  # size constants are shrunk for export: only the graph's structure matters
SMALL = 16  # constants below this are exported as declared

RESHAPES = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default"}


def export_sizes(declared: dict[str, int]) -> dict[str, int]:
    """The shrunk value of every declared constant of SMALL or more (the others stay as declared)."""
    small = {v for v in declared.values() if 2 <= v < SMALL}
    chosen: dict[int, int] = {}  # declared value -> export value, smallest first
    for value in sorted({v for v in declared.values() if v >= SMALL}):
        below = [chosen[b] for b in chosen if value % b == 0]
        step = math.lcm(*below, *(k for k in small if value % k == 0))
        floor = max(below, default=0)  # the shrunk value stays above every constant dividing it
        first = min(value, EXPORT_SIZE)
        if first % step == 0 and first > floor:
            chosen[value] = first
            continue
        lowest = (floor // step + 1) * step  # the smallest multiple of step above floor
        if lowest <= EXPORT_SIZE:
            chosen[value] = EXPORT_SIZE // step * step
        else:
            chosen[value] = lowest if lowest <= value else value
    return {k: chosen[v] for k, v in declared.items() if v >= SMALL}


def splits(graph: Graph) -> bool:
    """Whether a reshape of the graph splits one dim into several of size > 1 (its leading factors
    are literals the export baked: GroupNorm's groups, attention's heads)."""
    for node in graph.nodes:
        if node.op != "call_function" or str(node.target) not in RESHAPES:
            continue
        src, out = node.args[0].meta.get("val"), node.meta.get("val")
        if src is None or out is None:
            continue
        a = [s for s in src.shape if not statically_known_true(s == 1)]  # no guard on a size read from data
        b = [s for s in out.shape if not statically_known_true(s == 1)]
        if len(b) > len(a):
            return True
    return False
