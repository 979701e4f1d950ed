"""Kernel backends, one folder each, and the one table that lists them.

A backend folder `opforge/backends/<name>/` holds everything one kernel language is:

    __init__.py   its plugin (PLUGIN, a harness.plugin.BackendPlugin): static rules, build, CPU run,
                  device run, profile, and what the agents, knowledge and exporter ask of it
    emit/         the offline expert's emitters, each reading codegen's family plans (EMITTERS)
    system.j2     the drafting prompt's system contract for this language
    notes/        curated optimisation notes (Markdown) that retrieval hands the drafter
    knowledge/    known-good kernels, paired with ops/<op>.py, for the drafter's examples
    export.py     (optional) what `opforge export` does differently for this backend

Adding a backend is one folder and one row of BACKENDS. Shared code never names a backend: it asks
this table (and the plugin) instead. The table is light (no torch, no Triton): a worker process sets
its environment from the plugin before those libraries are imported. An explicitly requested backend
that is unavailable fails loudly with the reason."""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from opforge.harness.errors import BackendUnavailable
from opforge.harness.plugin import BackendPlugin

FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Backend:
    name: str
    module: str | None  # the plugin's module (exposes PLUGIN); None: no verifier in this release

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"backend name must be a lowercase identifier: {self.name!r}")

    @property
    def folder(self) -> Path:
        return FOLDER / self.name

    def plugin(self) -> BackendPlugin:
        if self.module is None:
            raise BackendUnavailable(f"backend '{self.name}' is unavailable: {self.unavailable()}")
        return importlib.import_module(self.module).PLUGIN

    def part(self, name: str):
        """The backend folder's module `name` (`emit`, `export`), None when this backend has none."""
        if self.module is None or importlib.util.find_spec(f"{self.module}.{name}") is None:
            return None
        return importlib.import_module(f"{self.module}.{name}")

    def unavailable(self) -> str | None:
        if self.module is None:
            return f"the {self.name} backend has no verifier in this release"
        return self.plugin().unavailable()


BACKENDS = {b.name: b for b in (
    Backend("triton", "opforge.backends.triton"),
    Backend("cuda", "opforge.backends.cuda"),
    Backend("triton_ascend", "opforge.backends.triton_ascend"),
    Backend("ascendc", "opforge.backends.ascendc"),
)}
DEFAULT = "triton"  # what a spec is drafted and verified for when no backend is named


def known(name: str) -> Backend:
    """The table's row for `name`, available here or not."""
    backend = BACKENDS.get(name)
    if backend is None:
        raise BackendUnavailable(f"unknown backend '{name}' (known: {', '.join(BACKENDS)})")
    return backend


def get_backend(name: str) -> Backend:
    backend = known(name)
    if reason := backend.unavailable():
        raise BackendUnavailable(f"backend '{name}' is unavailable: {reason}")
    return backend


def plugin(name: str) -> BackendPlugin:
    return get_backend(name).plugin()


def candidate_libraries() -> tuple[str, ...]:
    """The packages candidates of any backend import besides torch, in table order, each once."""
    return tuple(dict.fromkeys(lib for row in BACKENDS.values() if row.module for lib in row.plugin().libraries))


def watched_paths() -> tuple[str, ...]:
    """What the guards watch for patches besides torch: each backend's libraries and the objects its
    candidates reach in them (plugin.watched), in table order, each once."""
    return tuple(dict.fromkeys(path for row in BACKENDS.values() if row.module
                               for path in (*row.plugin().libraries, *row.plugin().watched)))


def describe(name: str) -> BackendPlugin:
    """The plugin of a known backend whether or not it can run here: its labels, prompts and hints."""
    return known(name).plugin()
