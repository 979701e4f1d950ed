"""The Triton-Ascend backend: Python files with @triton.jit kernels written for Huawei Ascend NPUs,
checked with Huawei's own toolchain from PyPI (triton-ascend + ascendnpu-ir, in their own prefix:
toolchain.py).

Stages: static (the Triton rules plus Ascend's: static.py); frontend_compile (frontend.py: the
recorded launches through triton-ascend's TTIR → adapter → bishengir-compile HIVM pipeline, which
plans the unified buffer; level `frontend-compiled`); compile (`hivmc`, CANN's device code
generator: skipped without CANN); CPU run (triton-ascend's interpreter, level `emulated`, with the
shared trials, variants, comparison and guards, refusing what the NPU would: launches past 65535
programs, memory outside the launch's tensors and races between programs (backends/triton/memory.py,
shared with NVIDIA Triton), and any launch the run job's own build did not
frontend-compile: launches.py); device run and profile with CANN + torch_npu + an NPU (npu.py)."""
from __future__ import annotations

import ast
import os
import sys

from opforge.harness.plugin import BackendPlugin, StaticOutcome, Tool, imports_any
from opforge.backends.triton_ascend import hints, toolchain

STEPS = ("static", "frontend_compile", "compile", "cpu_run", "device_run", "profile")


class TritonAscendPlugin(BackendPlugin):
    name, language, label = "triton_ascend", "python", "Triton-Ascend"
    cpu_cost = (5e-6, 2.5e-8)  # the same interpreter and memory model as Triton's (harness/cost.py)
    libraries = ("triton",)  # Huawei's Triton-Ascend installs itself as `triton`
    warm_imports = ()  # its prefix's numpy must be the one torch imports (prepare_phases): always a fresh worker
    watched = ("triton.language", "triton.testing", "triton.runtime.jit.JITFunction",
               "triton.runtime.jit.KernelInterface", "triton.runtime.autotuner.Autotuner")
    # Its most common failure is a tile over the unified buffer, which no GPU habit warns of.
    pinned_note = "unified_buffer_sizing.md"
    build_hint = hints.BUILD
    # Its candidates pass Triton's static checks (the same interpreter): the same cheat rule. Its own
    # rules (ascend-unsupported: NVIDIA's asm and libdevice; grid-too-large) refuse what Ascend cannot run.
    cheat_rules = frozenset({"interpreter-detection"})

    def reason_hints(self, reasons: list[str]) -> list[str]:
        return hints.reason_hints(reasons)
    steps = STEPS
    accelerator = "NPU"

    def looks_like(self, source: str) -> bool:
        return imports_any(source, self.libraries)  # Triton's language: Triton's file claims it first

    def unavailable(self) -> str | None:
        return toolchain.cached()[1]

    def static(self, source: str, *, float32_spec: bool) -> StaticOutcome:
        from opforge.backends.triton_ascend.static import check_ascend
        from opforge.backends.triton.static import check_source

        report = check_source(source, float32_spec=float32_spec)
        out = StaticOutcome(reasons=list(report.reasons))
        if not any(r.startswith("syntax-error") for r in report.reasons):
            found = check_ascend(ast.parse(source))
            out.reasons += found.reasons
            out.warnings += found.warnings
        chain, _ = toolchain.cached()
        out.job = {"ascend_prefix": str(chain.root) if chain else None, "npu_target": toolchain.DEFAULT_TARGET}
        return out

    def compiler(self) -> Tool:
        chain, _ = toolchain.cached()
        return Tool("bishengir-compile", chain.ascendnpu_ir if chain else None)

    def cpu_runner(self) -> Tool:
        chain, _ = toolchain.cached()
        return Tool("triton-ascend-interpreter", chain.triton_ascend if chain else None)

    def mounts(self) -> tuple[str, ...]:
        chain, _ = toolchain.cached()
        return (str(chain.root),) if chain else ()

    def prepare_phases(self, job: dict) -> None:
        # the prefix's numpy too is the one torch must import
        self._on_path(job)

    @staticmethod
    def _on_path(job: dict | None) -> str:
        root = (job or {}).get("ascend_prefix") or str(toolchain.prefix())
        if root not in sys.path:
            sys.path.insert(0, root)
        return root

    def prepare_worker(self, mode: str, device: str, job: dict | None = None) -> None:
        # triton-ascend's `triton` must win over the environment's NVIDIA Triton: first on sys.path,
        # before anything imports triton; its compilers on PATH for the front end's subprocesses.
        root = self._on_path(job)
        bins = [os.path.join(root, "ascendnpuir", "bin")]
        if home := toolchain.cann_home():
            bins += [str(home / "bin"), str(home / "compiler" / "bin")]
        os.environ["PATH"] = os.pathsep.join([*bins, os.environ.get("PATH", "/usr/bin:/bin")])
        if mode == "run" and device == "cpu":
            from opforge.backends.triton import hidden_names, launch_keys, memory
            from opforge.backends.triton_ascend import launches

            os.environ["TRITON_INTERPRET"] = "1"
            _patch_interpreter_first()
            _fast_reductions()
            launches.guard_grid()
            memory.install()  # bounds, races and program orders, as on NVIDIA Triton's CPU run
            hidden_names.install()  # the interpreter's own globals never reach the candidate's module
            launch_keys.require_built()
            if job and job.get("candidate_path"):
                launch_keys.build_first(job)
            _watch(INTERPRETER)
        else:
            os.environ.pop("TRITON_INTERPRET", None)
        _watch(OWN)

    # The run job interprets only launches its own build compiled (launches.py), so the build
    # records every case the run will call forward with, not just the main one.
    build_every_case = True
    watch_build = True  # the front end's verdict is computed in the candidate's build process

    def start_run(self, data: dict) -> None:
        from opforge.backends.triton import memory

        memory.start_run(data)

    def call_findings(self) -> dict:
        from opforge.backends.triton import memory

        return memory.findings()

    def before_import(self, job: dict) -> list[str]:
        if job.get("device") == "npu":
            import torch_npu  # noqa: F401  (registers the npu device the inputs go to)
        if job.get("mode") == "run" and job.get("device", "cpu") == "cpu":
            from opforge.backends.triton import launch_keys

            return list(launch_keys.BUILD_REASONS)  # of the run job's own build (prepare_worker)
        return []

    def build(self, launches: list, job: dict):
        from opforge.backends.triton_ascend import frontend
        from opforge.backends.triton_ascend.launches import key_of_recorded
        from opforge.harness.ladder import step

        too_many, warnings = frontend.grid_findings(launches)
        if too_many:
            return [], too_many, [], {"steps": {"static": step("failed", "opforge-static", None, reason=too_many[0])}}
        kernels, reasons, notes, steps = frontend.compile_launches(launches, job, dict(os.environ))
        keys = sorted({k for k in map(key_of_recorded, launches) if k})
        return kernels, reasons, notes, {"steps": steps, "warnings": warnings, "launch_keys": keys}


# The interpreter is the CPU run's "hardware": its classes are watched like triton.language (a
# candidate that reached them could make a kernel that stores its input look like one that computes).
# Imported before the snapshot here (NVIDIA's Triton imports it later, with the candidate).
INTERPRETER = ("triton.runtime.interpreter", "triton.runtime.interpreter.GridExecutor",
               "triton.runtime.interpreter.InterpreterBuilder", "triton.runtime.interpreter.InterpretedFunction",
               "triton.runtime.interpreter.ReduceOps", "triton.runtime.interpreter.ScanOps",
               "triton.runtime.interpreter.TensorHandle", "opforge.backends.triton.memory.Launch",
               "triton.runtime.interpreter.FunctionRewriter")


# This backend's own worker-side code judges the build (the front end's verdict, the launch keys):
# watched in the build job too (checker.build_job compares after the recorded forward).
OWN = ("opforge.backends.triton_ascend", "opforge.backends.triton_ascend.TritonAscendPlugin",
       "opforge.backends.triton_ascend.frontend", "opforge.backends.triton_ascend.launches",
       "opforge.backends.triton_ascend.toolchain", "opforge.backends.triton.aot",
       "opforge.backends.triton.launch_keys", "opforge.backends.triton.hidden_names",
       "opforge.backends.triton_ascend.dtypes")


def _watch(paths: tuple[str, ...]) -> None:
    import importlib

    from opforge.harness import snapshot

    for path in paths:  # a module not yet imported would show all its attributes as "added" later
        if path.startswith("opforge.") and path.count(".") > 1 and path.rsplit(".", 1)[1][:1].islower():
            importlib.import_module(path)
    snapshot.WATCHED = (*snapshot.WATCHED, *(p for p in paths if p not in snapshot.WATCHED))


def _patch_interpreter_first() -> None:
    """triton-ascend 3.2's interpreter rebinds triton.language's builtins the first time a kernel
    launches (interpreter._patch_lang; NVIDIA's Triton restores them after each launch) and some on
    every launch. Done here, before the guards snapshot those modules, the first patch is not
    mistaken for the candidate patching triton.language; the names a launch rebinds every time are
    measured (two more patches) and left out of that comparison (snapshot.REBOUND_EACH_LAUNCH).
    Any other change is still the candidate's."""
    import triton.language as tl
    from triton.runtime import interpreter

    from opforge.harness import snapshot

    scope = {"tl": tl, "core": tl.core}
    exec("def probe():\n    pass\n", scope)  # a function that sees both, as a kernel's globals do
    watched = {"triton.language": tl, "triton.language.core": tl.core, "triton.language.math": tl.math}
    interpreter._patch_lang(scope["probe"])
    before = {f"{p}.{k}": id(v) for p, m in watched.items() for k, v in vars(m).items()}
    interpreter._patch_lang(scope["probe"])
    after = {f"{p}.{k}": id(v) for p, m in watched.items() for k, v in vars(m).items()}
    snapshot.REBOUND_EACH_LAUNCH.update(k for k in before if after.get(k) != before[k])


# triton-ascend's own tl.max/tl.min (triton_patch/language/standard.py) reduce with combine
# functions of new names, which the interpreter's numpy fast paths (keyed on upstream's functions)
# miss: each reduction then runs element by element in Python, ~200x slower. These are the same
# computations as upstream's (core.maximum/minimum, which the interpreter maps to np.maximum /
# np.minimum whatever propagate_nan says), so each is handed the upstream function it equals.
SAME_REDUCTION = {"_elementwise_max_default": "_elementwise_max", "_elementwise_max_propagate_nan": "_elementwise_max",
                  "_elementwise_min_default": "_elementwise_min", "_elementwise_min_propagate_nan": "_elementwise_min",
                  "_elementwise_max": "_elementwise_max", "_elementwise_min": "_elementwise_min",
                  "_argmax_combine_tie_break_left": "_argmax_combine_tie_break_left",
                  "_argmin_combine_tie_break_left": "_argmin_combine_tie_break_left", "_sum_combine": "_sum_combine"}


def _fast_reductions() -> None:
    import copy

    import triton.language as tl
    from triton.runtime import interpreter

    reduce_ops = interpreter.ReduceOps
    original = reduce_ops.apply_impl

    def apply_impl(self, input):
        fn = getattr(self.combine_fn, "fn", None)
        name = getattr(fn, "__name__", "")
        upstream = getattr(tl.standard, SAME_REDUCTION.get(name, ""), None)
        if upstream is not None and self.combine_fn is not upstream and getattr(fn, "__module__", "").startswith(
                ("triton.language.", "triton.triton_patch.language.")):
            same = copy.copy(self)
            same.combine_fn = upstream
            return original(same, input)
        return original(self, input)

    reduce_ops.apply_impl = apply_impl


PLUGIN = TritonAscendPlugin()
