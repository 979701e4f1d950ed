"""Frames for the row-wise family: each node dim's place among the R canonical dims (negative,
counted from the right), or None for a size-1 dim that broadcasts.

Values after a reduction are placed by their rank; inputs, and values computed from inputs alone, by
how their users broadcast them (a [C] bias viewed as [C, 1] and added to [N, C, L] sits at -2, not -1).
Views may only add, drop or broadcast size-1 dims: one that moves a dim across the row layout is
Unsupported."""
from __future__ import annotations

import torch
from torch.fx import Node

from opforge.codegen.families.rowwise.layout import SHAPE_VIEWS, Plan, rank_of
from opforge.codegen.lower import Unsupported, val


def place(plan: Plan, nodes: list[Node]) -> None:
    """Values after a reduction are placed by their rank (R: keepdim, R - |D|: reduced, 0: global);
    inputs and values computed from inputs alone are placed by how their users broadcast them."""
    rank, dims = plan.rank, plan.dims
    full = tuple(range(-rank, 0))
    squeezed = tuple(d for d in full if d not in dims)
    after = plan.after
    by_rank = {rank: full, len(squeezed): squeezed, 0: ()}
    for node in nodes:
        if node.op != "call_function" or not isinstance(val(node), torch.Tensor) and not (
                node in plan.reduces or node in plan.scans):
            continue
        r = rank_of(node)
        if r == rank:
            plan.maps[node] = full
        elif after[node] or node in plan.reduces:
            if r not in by_rank:
                raise Unsupported(f"{node.name} ({node.target}) keeps only some of the reduced dims")
            plan.maps[node] = by_rank[r]
    guessed: set[Node] = set()  # no user said where their dims go: right-aligned, and no vote for their inputs
    for node in reversed(nodes):
        if node.op in ("placeholder", "call_function") and node not in plan.maps:
            plan.maps[node] = _from_users(plan, node, guessed)
    for node in nodes:  # a guess follows an input of its rank that is placed (a full sum of `target != -100`)
        if node in guessed and node.op == "call_function" and str(node.target) not in SHAPE_VIEWS:
            placed = [plan.maps[a] for a in node.all_input_nodes
                      if a not in guessed and a in plan.maps and len(plan.maps[a]) == len(plan.maps[node])]
            if placed:
                plan.maps[node] = placed[0]
                guessed.discard(node)
    for node in nodes:
        if node.op == "call_function" and str(node.target) in SHAPE_VIEWS and node not in plan.leaves:
            _check_view(plan, node)


def _from_users(plan: Plan, node: Node, guessed: set[Node]) -> tuple:
    """The frame of an input (or a value of inputs only): its non-1 dims as its users see them."""
    shape = tuple(val(node).shape)
    votes = [_user_view(plan, node, user) for user in node.users if user.op == "call_function" and user not in guessed]
    votes = [v for v in votes if v is not None]
    if not votes and any(size != 1 for size in shape):
        guessed.add(node)
    merged = []
    for i, size in enumerate(shape):
        seen = {v[i] for v in votes if v[i] is not None}
        if size == 1:
            merged.append(None)
        elif len(seen) > 1:
            raise Unsupported(f"{node.name} broadcasts against the reduced tensor in two ways")
        else:
            merged.append(seen.pop() if seen else i - len(shape))  # no user says: right-aligned
    return tuple(merged)


def _user_view(plan: Plan, node: Node, user: Node) -> tuple | None:
    target, m_user = str(user.target), plan.maps.get(user)
    if m_user is None or user in plan.reduces or user in plan.scans:
        return None
    r = len(val(node).shape)
    if target in SHAPE_VIEWS:
        pairs = dict(_view_pairs(user))
        return tuple(m_user[pairs[i]] if i in pairs else None for i in range(r))
    if len(m_user) < r:
        raise Unsupported(f"{node.name} has more dims than its user {user.name}")
    return tuple(m_user[len(m_user) - r:])


def _view_pairs(node: Node) -> list[tuple[int, int]]:
    """(input dim, output dim) for every input dim of size > 1, or Unsupported for a real reshape."""
    target = str(node.target)
    src, out = tuple(val(node.args[0]).shape), tuple(val(node).shape)
    if target == "prims.broadcast_in_dim.default":
        return [(i, b) for i, b in enumerate(node.args[2]) if src[i] != 1]
    if target == "aten.expand.default":
        shift = len(out) - len(src)
        return [(i, i + shift) for i in range(len(src)) if src[i] != 1]
    a = [(i, s) for i, s in enumerate(src) if s != 1]
    b = [(j, s) for j, s in enumerate(out) if s != 1]
    if [s for _, s in a] != [s for _, s in b]:
        raise Unsupported(f"{target} that reshapes {list(src)} to {list(out)}")
    return [(i, j) for (i, _), (j, _) in zip(a, b)]


def _check_view(plan: Plan, node: Node) -> None:
    m_in, m_out = plan.maps[node.args[0]], plan.maps[node]
    for i, j in _view_pairs(node):
        if m_in[i] is not None and m_in[i] != m_out[j]:
            raise Unsupported(f"{node.target} moves a dim of {node.args[0].name} across the row layout")
