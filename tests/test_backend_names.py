"""A backend is one folder: shared code never spells a backend's name. Read with `ast` (nothing is
imported): a string constant that is a backend's name, or a path into it (`cuda/...`), anywhere in
opforge/ outside opforge/backends/ (each backend's own folder and the descriptor table) fails.

Module paths are a library's, not a backend's (`triton.language`), and a backend folder may name the
libraries and targets it builds on (Triton-Ascend is Triton's language; Triton's GPU target is called
"cuda"). The one other exception is torch's device type for an NVIDIA GPU, spelled once as
harness/hardware.py's GPU_DEVICE. Migrations describe the data as it was when they ran: history."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import ROOT

from opforge.backends import BACKENDS

PACKAGE = ROOT / "opforge"
HISTORY = PACKAGE / "registry" / "migrations" / "versions"
DEVICE_TYPE = ("harness/hardware.py", "GPU_DEVICE")
SPELLED = re.compile(r"^(?:" + "|".join(map(re.escape, BACKENDS)) + r")(?:$|/)")


def _device_type(where: str, parents: dict, node: ast.AST) -> bool:
    parent = parents.get(node)
    return (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)
            and (where, parent.targets[0].id) == DEVICE_TYPE)


def spelled(source: str, where: str) -> list[str]:
    """`where:line: 'name'` for each backend name spelled in `source` (a module at opforge/`where`)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    return [f"opforge/{where}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SPELLED.match(node.value)
            and not _device_type(where, parents, node)]


def shared_sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if PACKAGE / "backends" not in p.parents and HISTORY not in p.parents)


def test_shared_code_never_spells_a_backend_name():
    found = [line for path in shared_sources()
             for line in spelled(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).as_posix())]
    assert not found, "ask opforge.backends (the table, the plugin) instead:\n" + "\n".join(found)


def test_the_rule_reads_the_shared_tree():
    where = {p.relative_to(PACKAGE).parts[0] for p in shared_sources()}
    assert {"agents", "harness", "knowledge", "exporter", "codegen", "registry", "cli.py"} <= where
    assert not any(p.relative_to(PACKAGE).parts[0] == "backends" for p in shared_sources())


@pytest.mark.parametrize("source, where, caught", [
    ('if backend == "cuda":\n    pass\n', "harness/verify.py", True),
    ('TABLE = {"triton_ascend": 1}\n', "exporter/library.py", True),
    ('NOTE = "triton/notes/x.md"\n', "knowledge/retrieve.py", True),
    ('def f(backend="ascendc"):\n    pass\n', "agents/state.py", True),
    ('GPU_DEVICE = "cuda"\n', "harness/judge.py", True),  # the device type is spelled in one place only
    ('GPU_DEVICE = "cuda"\n', "harness/hardware.py", False),
    ('import triton.language\nX = "triton.language"\n', "harness/guards.py", False),  # a library's module path
    ('name = "tritonic"\n', "harness/verify.py", False),
])
def test_the_rule_catches_a_spelled_name(source, where, caught):
    assert bool(spelled(source, where)) is caught
