"""The AscendC plugin's side of opforge's AscendC emulator (emulator/): whether it can run here, what
the static step learns from building a project (an API the emulator lacks keeps the level `static`),
installing an emulated project's binding modules before the candidate is imported, routing each
bound call through the harness's launch observers (the calls are the candidate's launches), and the
findings and hints its reason codes give."""
from __future__ import annotations

import re
import sys

from opforge.harness.plugin import matched_hints

_FINDINGS: list[str] = []  # the emulator's reasons since the last call_findings
NO_GXX = "the AscendC emulator builds with g++, and no g++ is on PATH"
REASON_HINTS = {
    "race": "Two pipes or two cores touch the same bytes unordered: EnQue/DeQue every tile between copy-in, "
            "compute and copy-out (or SetFlag/WaitFlag, PipeBarrier), and give each core its own part of every "
            "output (blockLength * GetBlockIdx()).",
    "deadlock": "A queue ran dry or full: every AllocTensor needs its FreeTensor in the same loop iteration, every "
                "DeQue an EnQue before it, and InitBuffer's buffer count bounds the tensors alive at once.",
    "use-after-free": "A LocalTensor was used after FreeTensor returned its buffer: free it after the last "
                      "instruction that reads it (after the copy-out's DataCopy).",
    "out-of-bounds": "A DataCopy or vector instruction went past a tensor or a GM buffer: check the tile count and "
                     "the tail (totalLength / blockDim / tileLength), and lengths in elements, DataCopyParams' "
                     "blockLen in 32-byte blocks.",
    "misaligned": "DataCopy moves whole 32-byte blocks: make every length and UB offset a multiple of 32 bytes, or "
                  "use DataCopyPad for a ragged tail.",
    "ub-overflow": "The queues and buffers InitBuffer carves exceed the unified buffer (192 KB on 910B): smaller "
                   "tiles or fewer buffers.",
    "unsupported": "opforge's AscendC emulator does not model this API, so the kernel cannot be verified here: use "
                   "the common vector and data-movement APIs.",
    "step-limit": "The kernel never finished in the emulator: check loop bounds (a tile count of 0 or a stride of 0).",
    "host-error": "The host side failed: check the TilingFunc (SetBlockDim, SetDataSize after SaveToBuffer), the "
                  "OpDef's DataType for the spec's dtypes and AddConfig(\"ascend910b\").",
    "emu-build": "g++ could not build the project for the emulator: fix the line it names.",
    "crash": "The kernel stopped on a signal: an integer division by a tiling value that is 0 (a tile count the "
             "TilingFunc never set, or set after SaveToBuffer), or a pointer outside the GM buffers.",
}
_CODE = re.compile(r"(?:^|: )(" + "|".join(map(re.escape, REASON_HINTS)) + r"): ")


def reason_hints(reasons: list[str]) -> list[str]:
    return matched_hints(_CODE, REASON_HINTS, reasons)


def runnable() -> bool:
    from opforge.backends.ascendc.emulator.build import compiler

    return compiler() is not None


def unrunnable(project, job: dict) -> tuple[str, str] | None:
    """(step status, reason) where the emulator cannot run `project` here; None where it can, or where its
    build fails for the candidate's own fault (kept in `job`: the run reports it without building again).
    Builds without loading the library (this process never runs candidate code); the worker's build is
    then a cache hit."""
    from opforge.backends.ascendc.emulator import EmulatorError, UnsupportedFeature
    from opforge.backends.ascendc.emulator.build import build_project

    if project is None:
        return None
    if not runnable():
        return "skipped", NO_GXX
    try:
        build_project(project, probe=False)
    except UnsupportedFeature as exc:
        return "unsupported", str(exc)
    except EmulatorError as exc:
        job["ascendc_emu_error"] = str(exc)
    return None


def with_model(job: dict, source: str, project) -> None:
    """MultiKernelBench's form with ModelNew only in `model_src`: the candidate imported is the file with
    model_src's code after it (MultiKernelBench executes model_src the same way), written beside a copy."""
    import tempfile
    from pathlib import Path

    model = _model_src(source) if project.form == "multikernelbench" else None
    if model is None:
        return
    path = Path(tempfile.mkdtemp(prefix="opforge-ascendc-model-")) / Path(job["candidate_path"]).name
    path.write_text(f"{source}\n\n# model_src, run after the project strings as MultiKernelBench runs it\n{model}\n")
    job["candidate_path"] = str(path)


def _model_src(source: str) -> str | None:
    """model_src's text where the file defines no ModelNew itself (project.py read both already)."""
    import ast

    tree = ast.parse(source)
    if any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
        return None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["model_src"]
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return node.value.value
    return None


def cache_dir() -> str:
    """Where the verifying process's static step leaves the library (the worker sees it read-only)."""
    from opforge.backends.ascendc.emulator.build import default_cache_dir

    return default_cache_dir()


def install(project, prebuilt_dir: str | None = None, error: str | None = None) -> list[str]:
    """Worker side: the project's binding modules in sys.modules (a stub torch_npu where there is none);
    reasons where the build failed. `prebuilt_dir`: the verifying process's cache (its static step built
    the library there; a worker's own temp folder is new for every job)."""
    import importlib.util
    import types

    from opforge.backends.ascendc.emulator import EmulatedProject, EmulatorError, library

    if error:
        return [error]  # the static step's build failed already
    try:
        emulated = EmulatedProject.build(project, prebuilt_dir=prebuilt_dir)
    except EmulatorError as exc:
        return [str(exc)]
    sys.modules.update(emulated.modules)
    if "torch_npu" not in sys.modules and importlib.util.find_spec("torch_npu") is None:
        sys.modules["torch_npu"] = types.ModuleType("torch_npu", "a stand-in: opforge's AscendC emulator runs on the CPU")
    import opforge.backends.cuda.runtime  # noqa: F401  (its launch observers are the harness's LaunchLog)

    library.LAUNCH_HOOK[0] = _observed
    return []


def _observed(name: str, args: tuple, call):
    """A bound call as a launch the harness records (and may no-op); the emulator's errors kept as findings."""
    from opforge.backends.ascendc.emulator import EmulatorError

    def recorded():
        try:
            return call()
        except EmulatorError as exc:
            _FINDINGS.append(str(exc))
            raise

    runtime = sys.modules.get("opforge.backends.cuda.runtime")
    if runtime is not None and runtime.OBSERVERS:
        return runtime.OBSERVERS[-1].cuda_launch(name, args, recorded)
    return recorded()


def start_run(data: dict) -> None:
    from opforge.backends.ascendc.emulator import set_seed

    models = data.get("models") or [{}]
    set_seed(models[0].get("seed", 0) if isinstance(models[0], dict) else 0)


def take_findings() -> list[str]:
    found = list(_FINDINGS)
    _FINDINGS.clear()
    return found
