"""What `opforge export` asks of a backend, in one small frozen dataclass. A backend that is exported
has an export.py in its folder defining `HOOKS = ExportHooks(...)`; the exporter finds it through
the table (`known(name).part("export")`) and never names a backend. A backend without one is not
exported by this release."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from opforge.backends import BACKENDS
from opforge.harness.hardware import GPU_DEVICE

# What configs/<op>.json keeps of each built GPU kernel (the compile step's metrics per launch).
GPU_LAUNCH_KEYS = ("kernel", "arch", "num_warps", "num_stages", "constexprs", "registers", "spill_stores", "shared_bytes")
FORMS = ("module", "project")


def device_arch(fingerprint: str) -> str:
    """A registry hardware fingerprint -> the key the generated runtime derives from a device: a
    GPU's architecture ("<GPU_DEVICE>/NVIDIA H200/sm_90" -> "sm_90"), else "cpu" (an interpreter or
    emulator ran it)."""
    if fingerprint.startswith(f"{GPU_DEVICE}/"):
        return fingerprint.rsplit("/", 1)[-1]
    return "cpu"


def ships_as_is(source: str) -> str | None:
    """Every verified source can ship: no reason to leave one out."""
    return None


def verbatim(source: str, package: str) -> str:
    return source


def no_files(package: str) -> dict[str, tuple[str, str]]:
    return {}


@dataclass(frozen=True)
class ExportHooks:
    """How one backend's promoted versions become part of an export. The defaults are a GPU
    language's: a kernel module of the package, shipped verbatim, keyed by the architecture it was
    verified on ("cpu" for an interpreter), launch facts as the GPU compile step reports them."""

    # "module": a kernel module of the package (<package>/ops/<module>.py); "project": a source
    # project directory beside the package, out of the wheel, written by `project_files`.
    form: str = "module"
    cpu_runner: str = ""  # the README's name for what ran its numerics on a CPU ("Triton interpreter")
    base: bool = False  # the package is built on it: always named in its description, `files` always shipped
    native: bool = False  # kernels are native code the package's copy of a runtime builds at first use
    own_module: bool = False  # its kernel is always a module of its own, `<op>__<arch>`, never the entry points
    module_tag: str = ""  # the op's next kernel module: `<op>__<tag>`, then `<op>__<tag>_<arch>`; "": `<op>__<arch>`
    module_note: str = ""  # appended to its kernel modules' line in the README's file list
    launch_keys: tuple[str, ...] = GPU_LAUNCH_KEYS  # what configs/<op>.json keeps of each built kernel
    arch: Callable[[str], str] = device_arch  # hardware fingerprint -> the runtime's architecture key
    problem: Callable[[str], str | None] = ships_as_is  # source -> why it cannot ship, else None
    rewrite: Callable[[str, str], str] = verbatim  # (source, package) -> the op module's kernel source
    files: Callable[[str], dict[str, tuple[str, str]]] = no_files  # package -> {path: (text, what)} it ships
    # Wheels: (--cuda-archs option) -> (architectures, where they came from), and the compile of the
    # package copy's kernels for them, (project, package, ops, archs, origin) -> notes.
    wheel_archs: Callable[[str | None], tuple[list[int], str]] | None = None
    prebuild: Callable[..., list[str]] | None = None
    # "project" form: (promoted kernel, package) -> {path under the export: (text, what)}, ExportError if unreadable
    project_files: Callable[[Any, str], dict[str, tuple[str, str]]] | None = None
    project_note: str = ""  # what the export's note says of the directories written

    def __post_init__(self) -> None:
        if self.form not in FORMS:
            raise ValueError(f"export form must be one of {FORMS}: {self.form!r}")
        if (self.form == "project") != (self.project_files is not None):
            raise ValueError("a project-form backend, and only one, exports through project_files")
        if self.form == "module" and not self.cpu_runner:
            raise ValueError("a module-form backend names its CPU runner (README rows of CPU-verified kernels)")
        if (self.wheel_archs is None) != (self.prebuild is None):
            raise ValueError("wheel_archs and prebuild come together")


@cache
def export_hooks(backend: str) -> ExportHooks | None:
    """The backend's hooks, None for a backend this release does not export (or does not know)."""
    row = BACKENDS.get(backend)
    module = row.part("export") if row else None
    return getattr(module, "HOOKS", None)


def exported(form: str | None = None) -> list[str]:
    """The backends this release exports (in `form`, if given), in the table's order: the order an
    op's kernels are exported in, its first the op's primary module."""
    return [name for name in BACKENDS if (hooks := export_hooks(name)) and form in (None, hooks.form)]
