"""Kernel backends register here through one small frozen dataclass.

An explicitly requested backend that is unavailable fails loudly with the reason."""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Callable

from opforge.harness.errors import BackendUnavailable


def _triton_missing() -> str | None:
    return None if importlib.util.find_spec("triton") else "the triton package is not installed"


def _not_built(name: str) -> Callable[[], str | None]:
    return lambda: f"the {name} backend has no verifier in this release (Triton is the supported backend)"


@dataclass(frozen=True)
class Backend:
    name: str
    language: str
    unavailable: Callable[[], str | None]  # None when usable, else why not

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"backend name must be a lowercase identifier: {self.name!r}")


BACKENDS = {b.name: b for b in (
    Backend("triton", "python", _triton_missing),
    Backend("cuda", "cuda", _not_built("cuda")),
    Backend("ascendc", "ascendc", _not_built("ascendc")),
)}


def get_backend(name: str) -> Backend:
    backend = BACKENDS.get(name)
    if backend is None:
        raise BackendUnavailable(f"unknown backend '{name}' (known: {', '.join(BACKENDS)})")
    if reason := backend.unavailable():
        raise BackendUnavailable(f"backend '{name}' is unavailable: {reason}")
    return backend
