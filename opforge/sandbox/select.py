"""Choosing a runtime: `--sandbox`, else OPFORGE_SANDBOX, else auto (docker when an engine answers,
else jail). An explicitly requested runtime that is unavailable is an error, never a silent
fallback; `none` (no isolation) is used only when asked for by name."""
from __future__ import annotations

import logging
import os

from opforge.sandbox import docker_runtime, jail
from opforge.sandbox.base import Sandbox
from opforge.sandbox.errors import SandboxUnavailable
from opforge.sandbox.process import ProcessSandbox

RUNTIMES = ("docker", "jail", "none")
log = logging.getLogger("opforge.sandbox")
_announced: set[str] = set()


def _why_not(name: str) -> str | None:
    return {"docker": docker_runtime.unavailable, "jail": jail.unavailable}.get(name, lambda: None)()


def _make(name: str) -> Sandbox:
    if name == "docker":
        return docker_runtime.DockerSandbox()
    if name == "jail":
        return jail.JailSandbox()
    return ProcessSandbox()


def get_sandbox(name: str | None = None) -> Sandbox:
    name = name or os.environ.get("OPFORGE_SANDBOX") or "auto"
    if name == "auto":
        return _auto()
    if name not in RUNTIMES:
        raise SandboxUnavailable(f"sandbox runtime '{name}' is not available (known: auto, {', '.join(RUNTIMES)})")
    if reason := _why_not(name):
        raise SandboxUnavailable(f"sandbox runtime '{name}' is unavailable: {reason}")
    return _make(name)


def _auto() -> Sandbox:
    docker_reason = _why_not("docker")
    if docker_reason is None:
        return _make("docker")
    jail_reason = _why_not("jail")
    if jail_reason is None:
        if "jail" not in _announced:  # say once per process that auto fell back
            _announced.add("jail")
            log.warning("sandbox: using 'jail' (docker unavailable: %s)", docker_reason)
        return _make("jail")
    raise SandboxUnavailable(f"no isolating sandbox runtime: docker: {docker_reason}; jail: {jail_reason} "
                             "(pass --sandbox none to run candidates without isolation)")


def describe_runtime(name: str | None = None) -> str:
    """One line saying which runtime get_sandbox(name) would use, without starting it (the UI shows it)."""
    name = name or os.environ.get("OPFORGE_SANDBOX") or "auto"
    if name == "none":
        return "none (no isolation: debugging only)"
    if name != "auto":
        reason = _why_not(name) if name in RUNTIMES else "unknown runtime"
        return f"{name}" + (f" — unavailable: {reason}" if reason else "")
    for candidate in ("docker", "jail"):
        if _why_not(candidate) is None:
            return f"{candidate} (auto)"
    return "none available — runs will fail until docker or bubblewrap is installed (scripts/sandbox_up.sh)"
