"""Process-wide handles the pages share: the registry (one per database file) and the status line."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from opforge.harness.errors import OpforgeError
from opforge.registry import Registry, RegistryError, resolve_db_path
from opforge.sandbox.errors import SandboxError


def db_path() -> Path:
    """$OPFORGE_DB, else ./.opforge/opforge.db (what `opforge ui --db` passes through)."""
    return resolve_db_path(None)


@st.cache_resource(show_spinner=False)
def _registry(path: str) -> Registry:
    return Registry(path)


def registry() -> Registry:
    """The open registry for this server; kept across reruns and sessions (SQLite in WAL mode)."""
    return _registry(str(db_path()))


@st.cache_data(ttl=60, show_spinner=False)
def sandbox_line() -> str:
    from opforge.sandbox.select import describe_runtime

    return describe_runtime()


@st.cache_data(ttl=600, show_spinner=False)
def hardware_line() -> str:
    from opforge.harness.hardware import detect

    hw = detect()
    return f"{hw.name} ({hw.fingerprint})"


def sidebar_status() -> None:
    """The registry path, the sandbox runtime and the hardware, on every page."""
    with st.sidebar:
        st.caption(f"**Registry** `{db_path()}`")
        st.caption(f"**Sandbox** {sandbox_line()}")
        st.caption(f"**Hardware** {hardware_line()}")


@contextmanager
def user_errors() -> Iterator[None]:
    """A library error (bad spec, unknown candidate, locked database) becomes one red line, not a
    traceback; anything else is a bug and propagates."""
    try:
        yield
    except (OpforgeError, RegistryError, SandboxError) as exc:
        st.error(str(exc), icon=":material/error:")
