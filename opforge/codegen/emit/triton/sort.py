"""Placeholder while the sort emitter is written this session (replaced before the stop)."""
from opforge.codegen.lower import Unsupported


def generate(lowered, title, shapes):
    raise Unsupported("no sort pattern in the graph")
