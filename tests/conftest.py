"""Shared fixtures: every test gets its own registry file; paths to the test data and the suite."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
SPECS = DATA / "specs"
KERNELS = DATA / "kernels"
TINY = SPECS / "tiny_softmax.py"


def require_runtime(name: str, reason: str | None) -> None:
    """Skip a test whose sandbox runtime is unavailable — or fail it where CI promises the runtime
    (OPFORGE_REQUIRE_SANDBOXES, set by .ci/run), so a missing engine cannot pass silently."""
    if not reason:
        return
    if os.environ.get("OPFORGE_REQUIRE_SANDBOXES"):
        pytest.fail(f"sandbox runtime {name} is required here but unavailable: {reason}")
    pytest.skip(f"{name} unavailable: {reason}")


@pytest.fixture(scope="session")
def default_sandbox() -> str:
    """The runtime for tests that are not about isolation: the cheap jail when available, else
    docker; without either (a laptop, not CI) `none`, so the rest of the suite still runs."""
    from sandbox import docker_runtime, jail

    for name, unavailable in (("jail", jail.unavailable), ("docker", docker_runtime.unavailable)):
        if unavailable() is None:
            return name
    if os.environ.get("OPFORGE_REQUIRE_SANDBOXES"):
        pytest.fail("no isolating sandbox runtime available, and OPFORGE_REQUIRE_SANDBOXES is set")
    return "none"


@pytest.fixture(autouse=True)
def isolated_registry(tmp_path, monkeypatch, default_sandbox):
    """A fresh registry per test via OPFORGE_DB; the test session's sandbox runtime."""
    db = tmp_path / "registry" / "opforge.db"
    monkeypatch.setenv("OPFORGE_DB", str(db))
    monkeypatch.setenv("OPFORGE_SANDBOX", default_sandbox)
    return db


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def default_sigint() -> None:
    """preexec_fn for a child a test will Ctrl-C: SIGINT back to its default. A suite started as a
    background job inherits SIGINT ignored, and Python then never raises KeyboardInterrupt."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
