"""A fusion group as a graph of its own: a sub-`Lowered` the existing emitters read like a whole spec.

Its placeholders are the group's inputs: the reference's own placeholders keep their kind, state name,
shape and dtype; a value an earlier group computes becomes a forward "input" with the node's recorded
shape and dtype. Views of placeholders and constants built from nothing (an arange, a full) are *free*:
copied into every group that reads them, where the emitters replay them as leaves, instead of being
cut into a kernel of their own. The group's outputs are its values read after it (by a later group or
the graph's output)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.fx import Graph, Node

from opforge.codegen.exprs import VIEWS
from opforge.codegen.lower import Lowered, Placeholder, Unsupported, val
from opforge.codegen.views import INDEXING

FREE_VIEWS = VIEWS | INDEXING | {"aten.alias.default", "aten.detach.default", "aten.clone.default"}


def free_nodes(lowered: Lowered) -> set[Node]:
    """Placeholders, their views, and nodes computed from no tensor at all, in any combination."""
    free: set[Node] = set()
    for node in lowered.graph.nodes:
        inputs = [a for a in node.all_input_nodes]
        if node.op == "placeholder" or node.op == "call_function" and (
                not inputs or str(node.target) in FREE_VIEWS and all(a in free for a in inputs)):
            free.add(node)
    return free


@dataclass
class Sub:
    """A group's graph, and how it connects: its inputs and outputs as nodes of the whole graph."""

    lowered: Lowered
    inputs: list[Node]  # one per placeholder of `lowered`, in its order
    outputs: list[Node]  # one per output of `lowered`, in its order


def sub_lowered(whole: Lowered, group: list[Node], free: set[Node]) -> Sub:
    """The group's nodes (and the free nodes they read) copied into a fresh graph."""
    members = set(group)
    copied = _with_free_inputs(group, free)
    order = {n: i for i, n in enumerate(whole.graph.nodes)}
    inputs = sorted({a for n in copied for a in n.all_input_nodes if a not in copied
                     or a.op == "placeholder"} | {n for n in copied if n.op == "placeholder"}, key=order.get)
    outputs = [n for n in group if any(u not in members for u in n.users) or n in whole.outputs]
    for node in inputs + outputs:
        if not isinstance(val(node), torch.Tensor):
            raise Unsupported(f"a group boundary at {node.name}, which is not one tensor")
    graph, env, placeholders = Graph(), {}, []
    kinds = {p.name: p for p in whole.placeholders}
    for node in inputs:
        env[node] = graph.placeholder(node.name if node.op == "placeholder" else f"t_{node.name}")
        env[node].meta = dict(node.meta)
        original = kinds.get(node.name) if node.op == "placeholder" else None
        value = val(node)
        placeholders.append(Placeholder(env[node].name, original.kind if original else "input",
                                        original.fqn if original else None, tuple(value.shape), value.dtype))
    for node in sorted(copied - set(inputs), key=order.get):
        env[node] = graph.node_copy(node, lambda n: env[n])
    graph.output(tuple(env[o] for o in outputs))
    n_args = sum(p.kind in ("input", "scalar") for p in placeholders)
    ops = {str(n.target) for n in graph.nodes if n.op == "call_function"}
    return Sub(Lowered(graph, placeholders, [env[o] for o in outputs], n_args, ops), inputs, outputs)


def _with_free_inputs(group: list[Node], free: set[Node]) -> set[Node]:
    """The group and every free node it reads, through chains of free nodes."""
    copied, todo = set(group), list(group)
    while todo:
        for arg in todo.pop().all_input_nodes:
            if arg in free and arg not in copied:
                copied.add(arg)
                todo.append(arg)
    return copied
