"""A backend is one folder: shared code never spells a backend's name. Read with `ast` (nothing is
imported): a string constant equal to a backend's name (or starting `<name>/`, `<name>.`) anywhere in
opforge/ outside that backend's own folder and the descriptor table fails."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import ROOT

from opforge.backends import BACKENDS

PACKAGE = ROOT / "opforge"
TABLE = PACKAGE / "backends" / "__init__.py"
# Migrations describe the data as it was when they ran: history, not code that may ask the table.
HISTORY = PACKAGE / "registry" / "migrations" / "versions"
# torch's name for an NVIDIA (or ROCm) device is a device type, not a backend: spelled once, here.
DEVICE_TYPE = (PACKAGE / "harness" / "hardware.py", "GPU_DEVICE")
NAMES = sorted(BACKENDS, key=len, reverse=True)
SPELLED = re.compile(r"^(" + "|".join(map(re.escape, NAMES)) + r")(?:$|[/.])")


def _mine(path: Path) -> str | None:
    """The backend whose folder holds `path`, else None."""
    rel = path.relative_to(PACKAGE).parts
    return rel[1] if len(rel) > 2 and rel[0] == "backends" and rel[1] in BACKENDS else None


def _device_type_constant(path: Path, node: ast.AST, parents: dict) -> bool:
    parent = parents.get(node)
    return ((path, getattr(parent, "targets", [None])[0] and parent.targets[0].id) == DEVICE_TYPE
            if isinstance(parent, ast.Assign) and isinstance(parent.targets[0], ast.Name) else False)


def spelled(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SPELLED.match(node.value):
            name = SPELLED.match(node.value).group(1)
            if name != _mine(path) and not _device_type_constant(path, node, parents):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    return found


def shared_sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if p != TABLE and HISTORY not in p.parents and "knowledge" not in p.relative_to(PACKAGE).parts[2:3])


def test_shared_code_never_spells_a_backend_name():
    found = [line for path in shared_sources() for line in spelled(path)]
    assert not found, "ask opforge.backends instead:\n" + "\n".join(found)


@pytest.mark.parametrize("source, caught", [
    ('if backend == "cuda":\n    pass\n', True),
    ('TABLE = {"triton_ascend": 1}\n', True),
    ('PATH = "triton/notes"\n', True),
    ('GPU_DEVICE = "cuda"\n', False),  # only in harness/hardware.py
    ('name = "tritonic"\n', False),
])
def test_the_rule_catches_a_spelled_name(tmp_path, source, caught):
    path = PACKAGE / "harness" / "hardware.py" if "GPU_DEVICE" in source else PACKAGE / "harness" / "x.py"
    tmp = tmp_path / "x.py"
    tmp.write_text(source)
    tree_path = path if not caught else PACKAGE / "harness" / "verify.py"
    # spelled() reads the file; point it at the temporary text under a path in the shared tree
    original = Path.read_text
    try:
        Path.read_text = lambda self, *a, **k: source if self == tree_path else original(self, *a, **k)
        assert bool(spelled(tree_path)) is caught
    finally:
        Path.read_text = original
