"""The agent loop as a LangGraph graph:

    plan -> draft -> evaluate -> reflect -> decide -(iterate)-> draft
                                               \\-(stop)-> record -> END

`build_graph(checkpointer)` returns a fresh compiled graph; tests build one per test."""
from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from opforge.agents.nodes.decide import decide, route
from opforge.agents.nodes.draft import draft
from opforge.agents.nodes.evaluate import evaluate
from opforge.agents.nodes.plan import plan
from opforge.agents.nodes.record import record
from opforge.agents.nodes.reflect import reflect
from opforge.agents.state import RunContext, RunState


def build_graph(checkpointer=None):
    graph = StateGraph(RunState, context_schema=RunContext)
    for name, node in (("plan", plan), ("draft", draft), ("evaluate", evaluate), ("reflect", reflect),
                       ("decide", decide), ("record", record)):
        graph.add_node(name, node)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "draft")
    graph.add_edge("draft", "evaluate")
    graph.add_edge("evaluate", "reflect")
    graph.add_edge("reflect", "decide")
    graph.add_conditional_edges("decide", route, {"draft": "draft", "record": "record"})
    graph.add_edge("record", END)
    return graph.compile(checkpointer=checkpointer)
