"""The interface every backend plugin provides: one folder under backends/ and one row of
BACKENDS (backends/__init__.py) add a backend.

A backend owns what differs between kernel languages: its static checks, which tools build and
run its candidates (and why one cannot run here), the worker's process setup and the build step.
Everything else — the sandbox, trials, variants, comparison, the anti-cheat guards, timing and
recording — is shared and never copied per backend: a candidate's kernels all launch from
`ModelNew.forward`, which the shared checker runs under the shared guards.
"""
from __future__ import annotations

import importlib.metadata
import re
from dataclasses import dataclass, field


def dist_version(dist: str) -> str | None:
    """An installed distribution's version, for step records (None when it is not installed)."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def imports_any(source: str, modules: tuple[str, ...]) -> bool:
    """Whether `source` has a line importing one of `modules` (`import triton`, `from triton.language import tl`)."""
    names = "|".join(map(re.escape, modules))
    return bool(names) and re.search(rf"^[ \t]*(?:import|from)[ \t]+(?:{names})\b", source, re.MULTILINE) is not None


def matched_hints(pattern, hints: dict[str, str], reasons: list[str]) -> list[str]:
    """The hints whose key `pattern` finds (its group 1) in `reasons`, each once, in order of appearance."""
    codes = dict.fromkeys(m.group(1) for m in map(pattern.search, reasons) if m)
    return [hints[code] for code in codes]


@dataclass
class StaticOutcome:
    """What a backend's static checks found: reasons reject the candidate; `job` is extra data the
    build and run jobs get (e.g. where each CUDA source starts in the file); `skip` names steps
    that cannot run for this candidate here, with the step record to put instead."""

    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    job: dict = field(default_factory=dict)
    skip: dict = field(default_factory=dict)  # step name -> step record (skipped/unsupported)


@dataclass(frozen=True)
class EmbeddedSource:
    """A backend whose candidate carries its kernels as a string in the Python file (CUDA's CUDA_SRC):
    an LLM reply may put that code in a fenced block of its own, which the drafter quotes back in."""

    variable: str  # the module-level string the candidate defines
    fence_tags: frozenset[str]  # the code-fence language tags of that code
    loader: str  # what the Python part calls with it


@dataclass(frozen=True)
class Tool:
    name: str
    version: str | None


class BackendPlugin:
    """Override every method; each is small. Host-side methods run in the verifying process (they
    never import the candidate); worker-side ones run in the sandboxed worker."""

    name = ""
    language = ""
    label = ""  # how people write the language: "Triton", "CUDA"
    # The Python packages its candidates import besides torch (import names): the worker mounts them,
    # the guards watch them for patches, and generated code must not shadow them.
    libraries: tuple[str, ...] = ()
    # Objects in those libraries a candidate reaches and could patch (dotted paths), watched too.
    watched: tuple[str, ...] = ()
    # What every worker of this backend imports before anything of the job: a sandbox may start the
    # job from a process that imported it already (Job.preload). () for a backend whose worker must
    # set up its process first (prepare_phases: its own numpy before torch's import).
    warm_imports: tuple[str, ...] = ("torch",)
    # The CPU run's cost per interpreted call: (seconds per element read or written, seconds per FLOP),
    # which harness/cost.py sizes specs by; None: sized by the element cap alone.
    cpu_cost: tuple[float, float] | None = None

    # -- what the agents and the knowledge ask (class attributes: no tool is needed to read them) ------
    # Whether a CPU run is paired with a compile for the GPU (sm_90): the drafting prompt then explains
    # the registers and shared memory that compile reports.
    gpu_compile = False
    pinned_note: str | None = None  # a file of the backend's notes/ that every retrieval leads with
    # A regex that only this backend's candidates match (CUDA's `load_cuda(`); None: a candidate is this
    # backend's when no other backend's marker matches it (the registry's history spans backends).
    source_marker = None
    build_hint: str | None = None  # the reflect node's hint for a failed build, where it means more here
    embedded_source: EmbeddedSource | None = None
    # Static rule codes of this backend that guard fairness or the sandbox, where the code's name does
    # not say so (reward/tiers.py: the `cheat` tier, beside every code naming a forbidden construct).
    cheat_rules: frozenset[str] = frozenset()

    def looks_like(self, source: str) -> bool:
        """Whether a file's text (Python or not: a `.cu` file too) looks written for this backend, read
        without importing it: `opforge verify` names that backend when a kernel given without --backend
        is not the default backend's. False when this backend cannot tell."""
        return False

    def reason_hints(self, reasons: list[str]) -> list[str]:
        """Hints for the next draft keyed on this backend's own finding codes in a verdict's reasons
        (the CUDA emulator's `race: ...`), in order of first appearance; [] when none applies."""
        return []

    def unavailable(self) -> str | None:
        """None when this backend can be asked for here, else why not (one line)."""
        raise NotImplementedError

    # -- host side ----------------------------------------------------------------------------------
    def static(self, source: str, *, float32_spec: bool) -> StaticOutcome:
        raise NotImplementedError

    def compiler(self) -> Tool:
        """The vendor compiler the compile step uses."""
        raise NotImplementedError

    def cpu_runner(self) -> Tool:
        """The interpreter or emulator that checks numerics on a CPU."""
        raise NotImplementedError

    # -- worker side ---------------------------------------------------------------------------------
    accelerator = "GPU"  # what its kernels run on, named where a device step is skipped
    # The verdict's steps for this backend, in ladder order (harness/ladder.py RUNGS).
    steps = ("static", "compile", "cpu_run", "device_run", "profile")

    def mounts(self) -> tuple[str, ...]:
        """Host paths the worker imports from besides the environment's (a toolchain's own prefix)."""
        return ()

    def prepare_worker(self, mode: str, device: str, job: dict | None = None) -> None:
        """Process setup before torch or the backend's libraries are imported (environment, sys.path)."""
        raise NotImplementedError

    def prepare_phases(self, job: dict) -> None:
        """Setup shared by a CPU verification's build and run (worker.run_phases), before torch is
        imported in the process both fork from: sys.path only, nothing that imports the backend's
        libraries (each phase's prepare_worker still runs in it)."""

    def numerics_unavailable(self) -> str | None:
        """Why no candidate of this backend can reach a numerics step on this machine (AscendC
        without CANN), else None: the agent loop stops after one round instead of spending its budget."""
        return None

    def start_run(self, data: dict) -> None:
        """Worker side, once the run job's data is loaded (its seed: the CPU run's program orders)."""

    def call_findings(self) -> dict:
        """Worker side, after each forward call of the run job: what the backend's own model of the
        hardware saw (the Triton CPU run's memory model: `memory` reasons, `float_atomics`, `orders`)."""
        return {}

    def before_import(self, job: dict) -> list[str]:
        """Worker side, before the candidate is imported: what must exist for the import to work (an
        AscendC project's extension module, built by bisheng). Returns reasons when that failed."""
        return []

    def build(self, launches: list, job: dict) -> tuple[list[dict], list[str], list[str], dict | None]:
        """Compile what one recorded forward launched: (per-kernel metrics, reasons, notes, extra).
        `extra` is None or {"steps": {name: step record}, "warnings": [...]}: the steps the build
        decided itself (a compile it could not run here is `skipped`; Ascend's front end adds
        `frontend_compile`; a launch rule broken by the recorded grid fails `static`)."""
        raise NotImplementedError
