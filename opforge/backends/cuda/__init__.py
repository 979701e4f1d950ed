"""The CUDA C++ backend: a Python file whose `CUDA_SRC` holds `__global__` kernels and `extern "C"`
launchers that `ModelNew.forward` calls through `opforge.cuda.load_cuda` (runtime.py), or
KernelBench's `torch.utils.cpp_extension.load_inline` form on a GPU.

Stages: static (static.py: the Python rules plus include, call and host-compute rules for the C++);
compile (nvcc.py: a real `nvcc -cubin` for the target with ptxas statistics); CPU run (emulator/:
opforge's strict CUDA emulator, under several thread schedules); device run and profile on a GPU
(the runtime builds the source with `nvcc -shared` and calls it on the current stream), shared with
every backend."""
from __future__ import annotations

import hashlib
import re
import shutil
from functools import lru_cache

from opforge.backends.cuda import hints
from opforge.harness.plugin import BackendPlugin, EmbeddedSource, StaticOutcome, Tool
from opforge.harness.ladder import step


# CUDA in a file, Python or not: opforge's CUDA_SRC and load_cuda, KernelBench's load_inline, or CUDA C++
# itself (a __global__ function; AscendC's kernels are `__global__ __aicore__`, which is not CUDA).
LOOKS = re.compile(r"\bCUDA_SRC\b|\b(?:load_cuda|load_inline)\s*\(|\b__global__(?!\s+__aicore__)\s")


@lru_cache(maxsize=1)
def _nvcc():
    """The nvcc this process uses (finding it runs nvcc): looked up once, not per step."""
    from opforge.backends.cuda import toolchain

    return toolchain.find_nvcc()


def _torch_has_cuda() -> bool:
    import torch

    return torch.version.cuda is not None


class CudaPlugin(BackendPlugin):
    name, language, label = "cuda", "cuda", "CUDA"
    gpu_compile = True
    # Candidates must follow opforge's launcher contract and stay within what the emulator runs.
    pinned_note = "opforge_contract.md"
    source_marker = re.compile(r"\b(?:load_cuda|load_inline)\s*\(")  # the static checks require one
    build_hint = hints.BUILD
    # reward/tiers.py: no rule beyond those whose names say so (cuda-forbidden-call, cuda-host-compute,
    # low-precision): cuda-include, cuda-preprocessor and cuda-format also refuse honest mistakes (a
    # <vector> include, `#ifdef __CUDACC__`), so a kernel refused by them is `static`, below `wrong`.
    cheat_rules: frozenset[str] = frozenset()
    embedded_source = EmbeddedSource("CUDA_SRC", frozenset({"cuda", "cu", "cpp", "c++", "cxx", "cc", "c"}), "load_cuda")

    def reason_hints(self, reasons: list[str]) -> list[str]:
        return hints.reason_hints(reasons)

    def looks_like(self, source: str) -> bool:
        return LOOKS.search(source) is not None

    def unavailable(self) -> str | None:
        return None  # every step says for itself what it cannot do here

    def static(self, source: str, *, float32_spec: bool) -> StaticOutcome:
        from opforge.backends.cuda.static import check_cuda_candidate

        found = check_cuda_candidate(source, float32_spec=float32_spec)
        out = StaticOutcome(reasons=list(found.reasons), warnings=list(found.warnings))
        out.job = {"cuda_format": found.format,
                   "cuda_sources": [[hashlib.sha256(src.encode()).hexdigest(), line] for src, line in found.cuda_sources]}
        if not out.reasons:
            out.skip = self._skips(found, float32_spec)
            if _nvcc() is None:  # the launch-resource model has no ptxas numbers: never passed as checked
                from opforge.backends.cuda.emulator.limits import UNCHECKED

                out.warnings.append(UNCHECKED)
        return out

    def _skips(self, found, float32_spec: bool) -> dict:
        from opforge.backends.cuda.emulator import unsupported_features

        skip = {}
        if found.format == "load_inline" and not _torch_has_cuda():
            why = ("KernelBench's load_inline form builds only against a CUDA build of PyTorch, "
                   "and this PyTorch is CPU-only")
            return {"compile": step("skipped", "torch.utils.cpp_extension", None, reason=why),
                    "cpu_run": step("skipped", "torch.utils.cpp_extension", None, reason=why)}
        if _nvcc() is None:
            skip["compile"] = step("skipped", "nvcc", None, reason="nvcc not found (CUDA_HOME, PATH, /usr/local/cuda*, "
                                    "or NVIDIA's nvidia-cuda-nvcc wheels: make setup installs them)")
        runner = self.cpu_runner()
        features = [f for src, _ in found.cuda_sources for f in unsupported_features(src)]
        if features:
            skip["cpu_run"] = step("unsupported", runner.name, runner.version,
                                   reason=f"the emulator cannot run {'; '.join(dict.fromkeys(features))}")
        elif found.fast_math and float32_spec:  # a GPU run of the same build is the judge (device_run)
            skip["cpu_run"] = step("unsupported", runner.name, runner.version,
                                   reason="--use_fast_math: the emulator computes nvcc's default build (IEEE `/`, "
                                   "sinf and expf, no flush to zero), not the approximate one the flag asks for")
        elif shutil.which("g++") is None:
            skip["cpu_run"] = step("skipped", runner.name, runner.version,
                                   reason="the emulator builds with g++, and no g++ is on PATH")
        return skip

    def compiler(self) -> Tool:
        found = _nvcc()
        return Tool("nvcc", found.version if found else None)

    def cpu_runner(self) -> Tool:
        from opforge.backends.cuda.emulator import TOOL, VERSION

        return Tool(TOOL, VERSION)

    def prepare_worker(self, mode: str, device: str, job: dict | None = None) -> None:
        import os

        os.environ.pop("TRITON_INTERPRET", None)  # the harness's own guards import Triton
        if device == "cpu":
            _install_limits((job or {}).get("arch") or 90)
        else:
            from opforge.backends.cuda import inline

            inline.install()

    def start_run(self, data: dict) -> None:
        """The verification's seed orders the emulator's shuffled schedules (each run's differ)."""
        from opforge.backends.cuda.emulator import library

        models = data.get("models") or [{}]
        library.set_seed(models[0].get("seed", 0) if isinstance(models[0], dict) else 0)

    def call_findings(self) -> dict:
        """What the emulated launches since the last call were refused for (`out-of-resources`), and
        a call whose result could depend on the call count (`stateful`, emulator/state.py)."""
        from opforge.backends.cuda.emulator import limits, state

        found = limits.findings().get("memory", []) + state.take_findings()
        return {"memory": found} if found else {}

    def build(self, launches: list, job: dict):
        from opforge.backends.cuda import nvcc, runtime, toolchain

        if _nvcc() is None:
            return [], [], [], {"steps": {"compile": step("skipped", "nvcc", None, reason="nvcc not found on this machine")}}
        starts = {sha: line for sha, line in job.get("cuda_sources", [])}
        kernels, reasons, seen = [], [], set()
        for lib in runtime.LOADED:
            if lib.sha256 in seen:
                continue
            seen.add(lib.sha256)
            try:
                report = nvcc.compile_cubin(lib.source, job.get("arch", 90), first_line=starts.get(lib.sha256))
            except nvcc.NvccError as exc:  # the candidate's fault: nvcc's words go back to the drafter
                reasons.append(str(exc))
                continue
            except toolchain.ToolchainError as exc:  # the machine's: the step could not run here
                return [], [], [], {"steps": {"compile": step("skipped", "nvcc", None,
                                                             reason=f"nvcc could not run here: {exc}")}}
            kernels += report["kernels"]
        notes = [] if runtime.LOADED else ["the candidate loaded no CUDA source (load_cuda was never called)"]
        return kernels, reasons, notes, None


def _install_limits(arch: int) -> None:
    """Run job, CPU: every emulated library gets ptxas's numbers of its sm_<arch> compile (the build
    job's, from nvcc's cache) for the launch-resource model; none where nvcc cannot compile it
    (the static step's warnings say so, or the build failed already)."""
    from opforge.backends.cuda import nvcc, toolchain
    from opforge.backends.cuda.emulator import limits

    def provider(source: str) -> dict | None:
        try:
            return nvcc.compile_cubin(source, arch)
        except (nvcc.NvccError, toolchain.ToolchainError):
            return None

    limits.install(provider if _nvcc() is not None else None)


PLUGIN = CudaPlugin()
