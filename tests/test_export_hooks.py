"""The exporter asks each backend through its export.py's HOOKS (exporter/hooks.py), never by name:
every backend of the table is exported, in the table's order, and a hook set that contradicts itself
is refused when its backend's module is imported."""
from __future__ import annotations

import pytest

from opforge.backends import BACKENDS
from opforge.exporter.hooks import ExportHooks, export_hooks, exported


def test_every_backend_is_exported_in_the_tables_order():
    assert exported() == list(BACKENDS)
    assert export_hooks("no_such_backend") is None
    assert sum(export_hooks(b).base for b in exported("module")) == 1  # the one the package is built on


@pytest.mark.parametrize("fields, complaint", [
    ({"form": "wheel", "cpu_runner": "x"}, "export form"),
    ({"form": "project"}, "project_files"),
    ({"cpu_runner": "x", "project_files": lambda pk, package: {}}, "project_files"),
    ({}, "CPU runner"),
    ({"cpu_runner": "x", "prebuild": lambda *a: []}, "come together"),
])
def test_contradictory_hooks_are_refused(fields, complaint):
    with pytest.raises(ValueError, match=complaint):
        ExportHooks(**fields)
