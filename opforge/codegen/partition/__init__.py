"""The partitioner: a graph no single emitter takes (softmax(x @ W), two Linears, a conv then
GroupNorm) cut into fusion groups (cut.py, after rewrite.py moves unary ops before views), each group
a graph of its own (subgraph.py) written by an existing emitter of the backend, and the kernels
spliced into one candidate file whose ModelNew runs them in order (rename.py, splice.py).

    kernel = generate(lowered, title, shapes, emitters)   # emitters: [(name, module)] of one backend
    kernel.kernels, kernel.family                          # 2, "program:matmul+rowwise"

A configuration of the program is {"kernels": [one configuration per group]}."""
from __future__ import annotations

from dataclasses import replace

from opforge.codegen.candidate import Kernel
from opforge.codegen.lower import Lowered, Unsupported
from opforge.codegen.partition.cut import Group, cut
from opforge.codegen.partition.rewrite import sink_unary_past_views
from opforge.codegen.partition.splice import program

__all__ = ["Group", "generate", "groups", "space"]


def generate(lowered: Lowered, title: str, shapes: dict, emitters: list[tuple[str, object]]) -> Kernel:
    """A program of several kernels; Unsupported naming the group no emitter takes."""
    cuts, failures = [], []
    for graph in (sink_unary_past_views(lowered), lowered):  # fewer kernels wins; a tie, the first
        try:
            cuts.append((graph, groups(graph, title, shapes, emitters)))
        except Unsupported as exc:
            failures.append(exc)
    if not cuts:
        raise failures[-1]  # the reference's own graph: its node names are the ones the user can find
    graph, cut_groups = min(cuts, key=lambda c: len(c[1]))
    if len(cut_groups) < 2:
        raise Unsupported("the graph is one group, which the emitters above refused")
    family = "program:" + "+".join(dict.fromkeys(g.kernel.family for g in cut_groups))

    def render(config: dict) -> str:
        return program(title, family, cut_groups, config["kernels"], graph, shapes)

    return Kernel(family, space(cut_groups), render, kernels=len(cut_groups))


def groups(lowered: Lowered, title: str, shapes: dict, emitters: list[tuple[str, object]]) -> list[Group]:
    """The cut of `lowered`, each group's Kernel generated under its own title (`title_0`, ...):
    distinct kernel names, in the profile and among CUDA's C launchers."""
    modules = dict(emitters)

    def accept(sub: Lowered) -> tuple[str, Kernel]:
        reasons = []
        for name, module in emitters:
            try:
                return name, module.generate(sub, title, shapes)
            except Unsupported as exc:
                reasons.append(f"{name}: {exc}")
        raise Unsupported("; ".join(reasons))

    return [replace(g, kernel=modules[g.emitter].generate(g.sub.lowered, f"{title}_{i}", shapes))
            for i, g in enumerate(cut(lowered, accept))]


def space(groups: list[Group]) -> tuple[dict, ...]:
    """Every group's first configuration, then each anchor group's (matmul, rowwise, window: not
    pointwise, unless all are) other configurations in turn, the rest at their first."""
    first = [g.kernel.space[0] for g in groups]
    anchors = [i for i, g in enumerate(groups) if g.kernel.family != "pointwise"] or list(range(len(groups)))
    configs = [{"kernels": first}]
    for i in anchors:
        for config in groups[i].kernel.space[1:]:
            configs.append({"kernels": first[:i] + [config] + first[i + 1:]})
    return tuple(configs)
