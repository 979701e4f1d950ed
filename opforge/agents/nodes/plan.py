"""plan: retrieve curated knowledge, suite examples and the registry's verified kernels for similar ops."""
from __future__ import annotations

from dataclasses import asdict

from langgraph.runtime import Runtime

from opforge.agents.state import RunContext, RunState

KNOWLEDGE_ITEMS = 6


def plan(state: RunState, runtime: Runtime[RunContext]) -> dict:
    from opforge.knowledge import retrieve

    ctx = runtime.context
    history = ctx.registry.verified_examples(limit=20, backend=ctx.backend)
    items = retrieve(ctx.spec.source, backend=ctx.backend, k=KNOWLEDGE_ITEMS, history=history)
    ctx.emit({"node": "plan", "message": f"retrieved {len(items)} knowledge items: "
              + ", ".join(item.title for item in items)})
    return {"knowledge": [asdict(item) for item in items]}
