"""The Triton backend: Python files with @triton.jit kernels, checked by opforge's static rules,
compiled ahead of time for a GPU target (backends/triton/aot.py), run under Triton's interpreter on a CPU
and natively on a GPU."""
from __future__ import annotations

import importlib.util
import os

from opforge.harness.plugin import BackendPlugin, StaticOutcome, Tool, dist_version, imports_any


class TritonPlugin(BackendPlugin):
    name, language, label = "triton", "python", "Triton"
    libraries = ("triton",)
    watched = ("triton.language", "triton.testing", "triton.runtime.jit.JITFunction",
               "triton.runtime.jit.KernelInterface", "triton.runtime.autotuner.Autotuner",
               "opforge.backends.triton.memory.Launch")
    gpu_compile = True
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
        else:
            os.environ.pop("TRITON_INTERPRET", None)
        # Triton 3.9 warns in every process that this is unset; keep its current default explicitly.
        os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

    def reason_hints(self, reasons: list[str]) -> list[str]:
        from opforge.backends.triton import memory

        return memory.reason_hints(reasons)

    def start_run(self, data: dict) -> None:
        from opforge.backends.triton import memory

        memory.start_run(data)

    def call_findings(self) -> dict:
        from opforge.backends.triton import memory

        return memory.findings()

    def build(self, launches: list, job: dict):
        from opforge.backends.triton import aot

        kernels, reasons, notes = aot.compile_launches(launches, job.get("arch", 90), float32=bool(job.get("float32")))
        return kernels, reasons, notes, None


PLUGIN = TritonPlugin()
