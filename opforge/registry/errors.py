"""Domain exceptions raised by the registry.

Callers (CLI, agents, UI) catch one type and show its message; SQLAlchemy and
sqlite3 errors never leak out of the public API undecorated.
"""

from __future__ import annotations


class RegistryError(Exception):
    """A registry operation was refused or could not be completed."""
