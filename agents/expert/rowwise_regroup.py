"""Reshapes at the edges of a row-wise graph: an input viewed into more or fewer dims before any op
(GroupNorm's [N, C, H, W] -> [N, G, C/G, H, W], a per-head norm's [B, T, H*D] -> [B, T, H, D]) and
an output viewed back. The plan treats such a view of an input as a leaf the launcher rebuilds, and
such an output as its source with the view replayed on the result. Replays take every size from the
tensor at run time (`x.shape[1] // 8`), so only the split's own factors (the group count) are literal."""
from __future__ import annotations

import math

from torch.fx import Node

from agents.expert.lower import Lowered, Unsupported, val

RESHAPES = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default"}


def _regrouping(node: Node) -> bool:
    """A reshape that splits or merges dims (not only adding or dropping size-1 dims)."""
    if not (isinstance(node, Node) and node.op == "call_function" and str(node.target) in RESHAPES):
        return False
    src, out = tuple(val(node.args[0]).shape), tuple(val(node).shape)
    return [s for s in src if s != 1] != [s for s in out if s != 1]


def _groups(src: tuple[int, ...], out: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Pairs (source dims, output dims) of equal products over the non-1 dims, in order."""
    a = [i for i, s in enumerate(src) if s != 1]
    b = [j for j, s in enumerate(out) if s != 1]
    groups, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        gs, go = [a[i]], [b[j]]
        i, j = i + 1, j + 1
        while math.prod(src[d] for d in gs) != math.prod(out[d] for d in go):
            if math.prod(src[d] for d in gs) < math.prod(out[d] for d in go) and i < len(a):
                gs.append(a[i])
                i += 1
            elif j < len(b):
                go.append(b[j])
                j += 1
            else:
                raise Unsupported(f"a reshape of {list(src)} to {list(out)}")
        if len(gs) > 1 and len(go) > 1:
            raise Unsupported(f"a reshape of {list(src)} to {list(out)} that regroups several dims at once")
        groups.append((tuple(gs), tuple(go)))
    if i != len(a) or j != len(b):
        raise Unsupported(f"a reshape of {list(src)} to {list(out)}")
    return groups


def replay(node: Node, t: str) -> str:
    """Torch code taking tensor `t` (shaped like node's input) to node's output, sizes read from `t`."""
    src, out = tuple(val(node.args[0]).shape), tuple(val(node).shape)
    sizes = ["1"] * len(out)
    for gs, go in _groups(src, out):
        if len(go) == 1:  # one dim, or a merge of several
            sizes[go[0]] = " * ".join(f"{t}.shape[{d}]" for d in gs)
        else:  # a split: the leading factors as the reference wrote them, the last one what remains
            lead = [out[d] for d in go[:-1]]
            for d, size in zip(go, lead):
                sizes[d] = str(size)
            sizes[go[-1]] = f"{t}.shape[{gs[0]}] // {math.prod(lead)}"
    return f"{t}.reshape({', '.join(sizes)})"


def edges(lowered: Lowered) -> tuple[dict[Node, Node], set[Node], dict[Node, Node]]:
    """(leaf views -> their input, inputs consumed by them, output views -> their source)."""
    leaves, consumed, post = {}, set(), {}
    for node in lowered.graph.nodes:
        if node.op != "placeholder" or not node.users:
            continue
        if all(_regrouping(user) for user in node.users):
            leaves.update({user: node for user in node.users})
            consumed.add(node)
    for node in lowered.outputs:
        if _regrouping(node) and node not in leaves and len(node.users) == 1:
            post[node] = node.args[0]
    return leaves, consumed, post
