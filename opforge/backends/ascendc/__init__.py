"""The AscendC backend: a Python file carrying an AscendC kernel project as strings, in opforge's
direct-launch form or MultiKernelBench's (project.py; the contract in the README's Ascend section).

Stages: static (static.py: the project read from the AST, its C++ read as the compiler reads it,
then the API table, the include and system-call rules, the 192 KB unified-buffer plan, 32-byte
DataCopy lengths, queue balance, and the agreement of kernel, launcher, binding and tiling); compile
(bisheng through CMake's `find_package(ASC)` or msopgen, cann.py) only where CANN is installed; the
CPU run everywhere else on opforge's AscendC emulator (emulator/: the project compiled with g++
against opforge's model of the programming model and of CANN's host side, every call under three
core schedules): the worker installs the project's binding modules before it imports the candidate
(before_import), the shared trials, comparison and guards run them (`cpu_run`, level emulated). An
API the emulator does not model keeps the level `static` (exit 3) naming it. With CANN the worker
builds the project with bisheng instead: the build job for the device (`compile`), the run job as
Huawei's CPU twin (`-DCMAKE_ASC_RUN_MODE=cpu`). On a host where torch_npu reports an NPU the worker
runs it there (`device_run`, `profile`); elsewhere the device run is skipped with that reason."""
from __future__ import annotations

from opforge.backends.ascendc import cann, emulated
from opforge.harness.plugin import BackendPlugin, StaticOutcome, Tool, dist_version
from opforge.harness.ladder import step

NO_NPU = "no NPU: opforge runs AscendC on a device only where torch_npu reports one, and this machine has none"
class AscendCPlugin(BackendPlugin):
    name, language, label = "ascendc", "ascendc", "AscendC"
    accelerator = "NPU"
    # reward/tiers.py: `ascendc-python` refuses a Python side that computes with torch or imports beyond
    # torch, torch_npu and the project's binding (Triton's torch-compute and forbidden-import), so its
    # breach is a `cheat`; ascendc-forbidden names itself. ascendc-include, -api, -ub, -tiling and the
    # rest refuse what the toolchain or the AI core would, where an honest project errs too: `static`.
    cheat_rules = frozenset({"ascendc-python"})

    def looks_like(self, source: str) -> bool:
        """A project in either form (a module-level ASCENDC_SOURCES or MultiKernelBench's strings), or
        AscendC C++ itself (`__aicore__`, `kernel_operator.h`)."""
        import re

        from opforge.backends.ascendc.project import MKB_STRINGS

        names = "|".join(("ASCENDC_SOURCES", *MKB_STRINGS))
        return re.search(rf"^(?:{names})\s*(?::[^=\n]*)?=|\b__aicore__\b|\bkernel_operator\.h\b", source,
                         re.MULTILINE) is not None

    def unavailable(self) -> str | None:
        return None  # static checks run everywhere; each later step says why it cannot run here

    def static(self, source: str, *, float32_spec: bool) -> StaticOutcome:
        from opforge.backends.ascendc.static import check_ascendc

        found = check_ascendc(source, float32_spec=float32_spec)
        out = StaticOutcome(reasons=list(found.reasons), warnings=list(found.warnings))
        out.job = {"ascendc_form": found.project.form if found.project else None, "ascendc_kernels": found.kernels}
        if cann.unavailable():
            out.job["ascendc_emu_cache"] = emulated.cache_dir()  # where _skips builds the emulated library
        if not out.reasons:
            out.skip = self._skips(found.project, out.job)
        return out

    def _skips(self, project, job: dict) -> dict:
        why = cann.unavailable()
        compiler, runner = self.compiler(), self.cpu_runner()
        from opforge.harness.hardware import find_npu

        device = {} if find_npu() is not None else {"device_run": step("skipped", reason=NO_NPU)}
        if not why:
            return device
        skip = {"compile": step("skipped", compiler.name, compiler.version, reason=why), **device}
        if (problem := emulated.unrunnable(project, job)) is not None:
            skip["cpu_run"] = step(problem[0], runner.name, runner.version, reason=problem[1])
        return skip

    def numerics_unavailable(self) -> str | None:
        return None if cann.unavailable() is None or emulated.runnable() else cann.unavailable()

    def reason_hints(self, reasons: list[str]) -> list[str]:
        return emulated.reason_hints(reasons)

    def start_run(self, data: dict) -> None:
        """The verification's seed orders the emulator's shuffled core schedule (each run's differs)."""
        if cann.unavailable():
            emulated.start_run(data)

    def call_findings(self) -> dict:
        """What the emulator reported for the calls since the last: `race: ...`, `deadlock: ...` (each with
        its code), reported even where forward caught what the call raised."""
        found = emulated.take_findings()
        return {"memory": found} if found else {}

    def compiler(self) -> Tool:
        return Tool("bisheng", _cann_version())

    def cpu_runner(self) -> Tool:
        if cann.unavailable():
            from opforge.backends.ascendc.emulator import TOOL, VERSION

            return Tool(TOOL, VERSION)
        return Tool("ascendc-cpu-twin", _cann_version())

    def mounts(self) -> tuple[str, ...]:
        """The emulator's library cache, read-only: the static step builds there, the worker loads from it."""
        return (emulated.cache_dir(),) if cann.unavailable() else ()

    def prepare_worker(self, mode: str, device: str, job: dict | None = None) -> None:
        import os

        os.environ.pop("TRITON_INTERPRET", None)

    def before_import(self, job: dict) -> list[str]:
        """Without CANN, build the project for the emulator and install its binding modules under the
        names the candidate imports (emulated.py). With CANN, render and build the project the candidate
        imports (cann.build; bisheng's own lines as reasons): for the device in the build job, as the CPU
        twin in a CPU run job."""
        import sys
        import tempfile
        from pathlib import Path

        from opforge.backends.ascendc.project import read_project

        source = Path(job["candidate_path"]).read_text()
        project = read_project(source)
        if cann.unavailable():
            emulated.with_model(job, source, project)
            return emulated.install(project, job.get("ascendc_emu_cache"), job.get("ascendc_emu_error"))
        if job.get("device") == "npu":
            import torch_npu  # noqa: F401  (registers the npu device the inputs go to)
        module = next(iter(project.modules), "custom_ops_lib")
        mode = "cpu" if job.get("mode") == "run" and job.get("device", "cpu") == "cpu" else "npu"
        out, reasons = cann.build(project, Path(tempfile.mkdtemp(prefix="opforge-ascendc-")), module, mode=mode)
        if out is not None and str(out) not in sys.path:
            sys.path.insert(0, str(out))  # where the project's extension module was built
        return [f"build-error: {r}" if not r.startswith("build-error") else r for r in reasons]

    def build(self, launches: list, job: dict):
        """The project was built before the candidate was imported (before_import): what the forward
        launched through its binding is the kernel list."""
        kernels = [{"kernel": name, "target": cann.ARCH} for name in job.get("ascendc_kernels", [])]
        return kernels, [], [], None


def _cann_version() -> str | None:
    """CANN's version from its toolkit's version file, where there is one."""
    home = cann.cann_home()
    for name in ("version.cfg", "version.info"):
        path = home / name if home else None
        if path is not None and path.is_file():
            for line in path.read_text(errors="replace").splitlines():
                if line.lower().startswith(("version=", "toolkit_version=")):
                    return line.split("=", 1)[1].strip()
    return dist_version("cann") if home else None


PLUGIN = AscendCPlugin()
