"""Kernel backends as plugins: one folder each (its static checks, build, CPU run, device run and
profile behind harness/backends/base.py's BackendPlugin) and one row here.

The table is light (no torch, no Triton): a worker process sets its environment from the plugin
before those libraries are imported. An explicitly requested backend that is unavailable fails
loudly with the reason."""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from opforge.harness.backends.base import BackendPlugin
from opforge.harness.errors import BackendUnavailable


@dataclass(frozen=True)
class Backend:
    name: str
    language: str
    module: str | None  # the plugin's module (exposes PLUGIN); None: no verifier in this release

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"backend name must be a lowercase identifier: {self.name!r}")

    def plugin(self) -> BackendPlugin:
        if self.module is None:
            raise BackendUnavailable(f"backend '{self.name}' is unavailable: {self.unavailable()}")
        return importlib.import_module(self.module).PLUGIN

    def unavailable(self) -> str | None:
        if self.module is None:
            return f"the {self.name} backend has no verifier in this release"
        return self.plugin().unavailable()


BACKENDS = {b.name: b for b in (
    Backend("triton", "python", "opforge.harness.backends.triton"),
    Backend("cuda", "cuda", "opforge.harness.backends.cuda"),
    Backend("triton_ascend", "python", "opforge.harness.backends.triton_ascend"),
    Backend("ascendc", "ascendc", "opforge.harness.backends.ascendc"),
)}


def get_backend(name: str) -> Backend:
    backend = BACKENDS.get(name)
    if backend is None:
        raise BackendUnavailable(f"unknown backend '{name}' (known: {', '.join(BACKENDS)})")
    if reason := backend.unavailable():
        raise BackendUnavailable(f"backend '{name}' is unavailable: {reason}")
    return backend


def plugin(name: str) -> BackendPlugin:
    return get_backend(name).plugin()
