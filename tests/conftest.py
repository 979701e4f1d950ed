"""Shared fixtures: every test gets its own registry file; paths to the test data and the suite."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
SPECS = DATA / "specs"
KERNELS = DATA / "kernels"
TINY = SPECS / "tiny_softmax.py"


@pytest.fixture(autouse=True)
def isolated_registry(tmp_path, monkeypatch):
    """A fresh registry per test via OPFORGE_DB, and no sandbox override from the caller's shell."""
    db = tmp_path / "registry" / "opforge.db"
    monkeypatch.setenv("OPFORGE_DB", str(db))
    monkeypatch.delenv("OPFORGE_SANDBOX", raising=False)
    return db


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
