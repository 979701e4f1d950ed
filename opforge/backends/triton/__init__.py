"""The Triton backend: Python files with @triton.jit kernels, checked by opforge's static rules,
compiled ahead of time for a GPU target (backends/triton/aot.py), run under Triton's interpreter on a CPU
and natively on a GPU."""
from __future__ import annotations

import importlib.util
import os

from opforge.harness.plugin import BackendPlugin, StaticOutcome, Tool, dist_version, imports_any


class TritonPlugin(BackendPlugin):
    name, language, label = "triton", "python", "Triton"
    # measured for the expert's kernels under the interpreter with the memory model (benchmarks/cpu_cost.py)
    cpu_cost = (5e-6, 2.5e-8)
    libraries = ("triton",)
    watched = ("triton.language", "triton.testing", "triton.runtime.jit.JITFunction",
               "triton.runtime.jit.KernelInterface", "triton.runtime.autotuner.Autotuner",
               "opforge.backends.triton.memory.Launch")
    gpu_compile = True
    # reward/tiers.py: `interpreter-detection` (reading what tells the CPU interpreter from the compiler)
    # is only of use to a kernel that behaves otherwise under the judge, so its breach is a `cheat`;
    # `unbound-name` is as often an honest NameError and stays `static`.
    cheat_rules = frozenset({"interpreter-detection"})
    # Kernels are often checked on the CPU interpreter, which hides GPU compile errors.
    pinned_note = "interpreter_vs_gpu.md"

    def looks_like(self, source: str) -> bool:
        return imports_any(source, self.libraries)

    def unavailable(self) -> str | None:
        return None if importlib.util.find_spec("triton") else "the triton package is not installed"

    def static(self, source: str, *, float32_spec: bool) -> StaticOutcome:
        from opforge.backends.triton.static import check_source

        return StaticOutcome(reasons=check_source(source, float32_spec=float32_spec).reasons)

    def compiler(self) -> Tool:
        return Tool("triton", dist_version("triton"))

    def cpu_runner(self) -> Tool:
        return Tool("triton-interpreter", dist_version("triton"))

    def prepare_worker(self, mode: str, device: str, job: dict | None = None) -> None:
        # Triton reads TRITON_INTERPRET when it is first imported, for its own library functions
        # too, so a CPU run needs a process of its own, set up before the import.
        if mode == "run" and device == "cpu":
            os.environ["TRITON_INTERPRET"] = "1"
            from opforge.backends.triton import fastdot, fastlang, memory

            fastdot.install()
            fastlang.install()
            memory.install()  # bounds, races and program orders of every interpreted launch
            from opforge.backends.triton import hidden_names, launch_keys
            from opforge.harness import snapshot

            hidden_names.install()  # the interpreter's own globals never reach the candidate's module
            launch_keys.require_built()  # compiled = executed: the run interprets only what the build compiled
            if job and job.get("candidate_path"):
                launch_keys.build_first(job)
            snapshot.WATCHED = (*snapshot.WATCHED, *(p for p in RUN_WATCHED if p not in snapshot.WATCHED))
        else:
            os.environ.pop("TRITON_INTERPRET", None)
        # Triton 3.9 warns in every process that this is unset; keep its current default explicitly.
        os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

    def reason_hints(self, reasons: list[str]) -> list[str]:
        from opforge.backends.triton import memory, resources

        return resources.reason_hints(reasons) + memory.reason_hints(reasons)

    def start_run(self, data: dict) -> None:
        from opforge.backends.triton import memory

        memory.start_run(data)

    def call_findings(self) -> dict:
        from opforge.backends.triton import memory

        return memory.findings()

    # The CPU run interprets only launches its build compiled (launch_keys.py), so the build records
    # every model and case the run will call forward with, not just the main one.
    build_every_case = True

    def before_import(self, job: dict) -> list[str]:
        if job.get("mode") == "run" and job.get("device", "cpu") == "cpu":
            from opforge.backends.triton import launch_keys

            return list(launch_keys.BUILD_REASONS)  # of the run job's build (prepare_worker)
        return []

    def build(self, launches: list, job: dict):
        from opforge.backends.triton import aot, launch_keys

        kernels, reasons, notes = aot.compile_launches(launches, job.get("arch", 90), float32=bool(job.get("float32")))
        return kernels, reasons, notes, {"launch_keys": launch_keys.keys_of_recorded(launches)}


# What the CPU run's own setup installed (the launch keys the build compiled, the rewriter that keeps
# the interpreter's names hidden): watched like triton.language once set up.
RUN_WATCHED = ("opforge.backends.triton.launch_keys", "opforge.backends.triton.hidden_names",
               "triton.runtime.interpreter.FunctionRewriter", "triton.runtime.interpreter.InterpretedFunction")

PLUGIN = TritonPlugin()
