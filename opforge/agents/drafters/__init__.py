"""Drafters behind one interface (agents/drafters/base.py): the LLM drafter and the offline expert."""
