"""The offline expert drafter: Triton source generated from the reference's ATen graph.

Generators are tried in order — matmul (an mm/bmm with a fused epilogue), rowwise (reductions and
scans with fused prologue/epilogue), pointwise, window (max/avg pooling) — and the first that accepts
the graph drafts.
Each generator exposes a tuning space; round r drafts the next `n` configurations, so the loop
evaluates several and keeps the best (the chosen configuration is in the candidate's meta). When
nothing accepts the graph the draft says "unsupported: ..." with the ATen ops, and the run stops
so an LLM drafter can take over."""
from __future__ import annotations

import importlib
import tempfile
from functools import lru_cache
from pathlib import Path

from opforge.agents.drafters.base import Draft, DraftRequest
from opforge.agents.expert.lower import Lowered, Unsupported, lower, state_shapes

GENERATORS = ("matmul", "rowwise", "pointwise", "window")


@lru_cache(maxsize=32)
def _lowered(spec_source: str, sizes: tuple) -> tuple[Lowered, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.py"
        path.write_text(spec_source)
        return lower(path), state_shapes(path, dict(sizes))


def generate(spec_source: str, op: str, sizes: dict):
    """The first generator's Kernel for this spec; Unsupported naming every generator's reason."""
    lowered, shapes = _lowered(spec_source, tuple(sorted(sizes.items())))
    title = "".join(c if c.isalnum() else "_" for c in op).strip("_") or "op"
    reasons = []
    for name in GENERATORS:
        try:
            module = importlib.import_module(f"opforge.agents.expert.{name}")
        except ImportError:  # a generator not present in this build is simply skipped
            continue
        try:
            return module.generate(lowered, title, shapes)
        except Unsupported as exc:
            reasons.append(f"{name}: {exc}")
    # A generator that found nothing of its kind ("no pooling op...") says least: its reason goes last.
    reasons.sort(key=lambda r: r.split(": ", 1)[1].startswith("no "))
    raise Unsupported("; ".join(reasons) or "no generator available")


class ExpertDrafter:
    name = "expert"

    def describe(self) -> str:
        return "offline expert drafter (Triton generated from the reference's ATen graph)"

    def draft(self, request: DraftRequest) -> list[Draft]:
        try:
            kernel = generate(request.spec_source, request.op, request.sizes)
        except Unsupported as exc:
            return [Draft(source=None, drafter=self.name, problem=f"unsupported: {exc}", meta={"exhausted": True})]
        # Without a GPU there are no timings to rank configurations by: one per round is enough.
        n = 1 if "interpreter" in request.hardware else request.n
        configs = kernel.space[request.round * n:(request.round + 1) * n]
        return [Draft(source=kernel.render(config), drafter=self.name,
                      meta={"family": kernel.family, "config": config}) for config in configs]
