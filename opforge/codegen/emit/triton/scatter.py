"""Placeholder while the scatter emitter is written this session (replaced before the stop)."""
from opforge.codegen.lower import Unsupported


def generate(lowered, title, shapes):
    raise Unsupported("no scatter pattern in the graph")
