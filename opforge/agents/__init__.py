"""The agent loop: a LangGraph graph that drafts kernels, evaluates them in the sandbox, learns from
the feedback and keeps the best (agents/graph.py), with its drafters (agents/drafters/)."""
