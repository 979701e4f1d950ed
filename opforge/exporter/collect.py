"""What an export contains: the registry's active versions, grouped by op, with what the generated
runtime needs to decide when a kernel applies (input kinds, dtypes and ranks it was verified for,
the architectures it was verified on) and what its metadata reports (speedups, launch configs)."""
from __future__ import annotations

import inspect
import json
import keyword
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from opforge.exporter.hooks import export_hooks, exported
from opforge.harness import spec as spec_loader
from opforge.harness.errors import OpforgeError
from opforge.harness.hardware import GPU_DEVICE
from opforge.registry.promoted import PromotedKernel


class ExportError(OpforgeError):
    """The registry's promoted versions cannot be exported as asked."""


@dataclass(frozen=True)
class InputSig:
    name: str
    kind: str  # "tensor", "int", "float" or "bool"
    dtype: str | None  # tensors: e.g. "float32"
    ranks: tuple[int, ...]  # tensors: every rank verification covered


@dataclass(frozen=True)
class ArchImpl:
    """One active version: one backend's kernel for one architecture key, as its export hooks give
    it ("sm_90", or "cpu" = verified on a CPU: Triton's interpreter, opforge's CUDA emulator; "npu"
    for every Triton-Ascend kernel, whether triton-ascend's interpreter or an NPU verified it)."""

    backend: str  # a name of the table exported as kernel modules (exporter.hooks: form "module")
    arch: str
    module: str  # module under <package>.ops holding this kernel
    version: int
    candidate_id: int
    candidate_sha256: str
    drafter: str
    hardware: str
    hardware_name: str
    source: str
    timings: dict[str, Any] | None
    launches: list[dict[str, Any]]
    config: dict[str, Any] | None
    variants: list[dict[str, Any]]  # per verified input variant: shapes, atol, rtol, errors
    level: str | None  # the verification ladder's rung (None: recorded before the ladder)
    verified_on: str | None  # where its numerics ran ("cpu:opforge-cuda-emu-1.0", "nvidia-h200")


@dataclass(frozen=True)
class OpExport:
    name: str
    class_name: str
    spec_source: str
    spec_sha256: str
    inputs: tuple[InputSig, ...]
    outputs: int  # tensors returned: 1 a bare tensor, N > 1 a tuple, -1 a one-tensor tuple, 0 None
    stateless: bool  # the reference Model has no parameters or buffers
    init_args: list | None  # [args, kwargs] verification constructed ModelNew with (JSON), if JSON
    init_size_args: tuple[int, ...]  # positions of init_args that are the spec's size constants
    mutates: tuple[str, ...]
    sizes_used: dict[str, int]
    impls: tuple[ArchImpl, ...]
    notes: tuple[str, ...] = field(default=())
    # Every dtype combination verification ran (one per input list: tensors' dtypes, None for scalars),
    # in the spec's order without repeats: the runtime runs the kernel for these only.
    dtype_sets: tuple[tuple[str | None, ...], ...] = field(default=())
    implements: tuple[str, ...] = field(default=())  # OPFORGE["implements"]: engine ops it stands for ("vllm:rms_norm")


def arch_key(fingerprint: str, backend: str) -> str:
    """Registry hardware fingerprint -> the key the generated runtime derives from a device (the
    backend's export hooks decide: exporter.hooks.device_arch unless it says otherwise)."""
    return export_hooks(backend).arch(fingerprint)


def class_name(op: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9a-zA-Z]+", op) if part) or "Op"


# Names the package itself uses at its top level (an op named so would shadow them).
PACKAGE_NAMES = {"metadata", "fallbacks", "check", "plugins", "ops", "references", "configs", "load_json",
                 "FallbackForbidden", "stats", "kernel_calls"}


def check_op_name(op: str) -> None:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", op) or keyword.iskeyword(op) or "__" in op:
        raise ExportError(f"op name {op!r} cannot be a Python module and torch op name "
                          "(use lower_snake_case in OPFORGE['name'])")
    if op in PACKAGE_NAMES:
        raise ExportError(f"op name {op!r} is taken by the exported package itself; rename it in OPFORGE['name']")


def _input_names(model_cls: type, count: int) -> list[str]:
    params = list(inspect.signature(model_cls.forward).parameters.values())[1:]
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) < count:  # forward(self, *args): name them by position
        names = [f"arg{i}" for i in range(count)]
    return names[:count]


def _kind(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return "tensor"
    return {bool: "bool", int: "int", float: "float"}[type(x)]


def _inputs(module: Any, lists: list[list]) -> tuple[InputSig, ...]:
    """Each forward argument's kind, dtype and the ranks the verified input lists gave it."""
    first = lists[0]
    sigs = []
    for i, (name, x) in enumerate(zip(_input_names(module.Model, len(first)), first)):
        if name.startswith("_export_"):
            raise ExportError(f"forward argument {name!r}: the _export_ prefix is reserved for the entry points")
        kind = _kind(x)
        dtype = str(x.dtype).removeprefix("torch.") if kind == "tensor" else None
        ranks = sorted({xs[i].dim() for xs in lists if isinstance(xs[i], torch.Tensor)})
        sigs.append(InputSig(name=name, kind=kind, dtype=dtype, ranks=tuple(ranks)))
    return tuple(sigs)


def dtype_sets(lists: list[list]) -> tuple[tuple[str | None, ...], ...]:
    """Each verified input list's dtype tuple (tensors' dtypes, None for scalars), first seen first."""
    tuples = [tuple(str(x.dtype).removeprefix("torch.") if isinstance(x, torch.Tensor) else None for x in xs)
              for xs in lists]
    return tuple(dict.fromkeys(tuples))


def implements(meta: dict, where: str) -> tuple[str, ...]:
    """OPFORGE["implements"]: a list of engine op keys ("vllm:rms_norm"); anything else is refused."""
    keys = meta.get("implements", ())
    if not isinstance(keys, (list, tuple)) or not all(isinstance(k, str) and re.fullmatch(r"[a-z]+:[\w.:-]+", k)
                                                      for k in keys):
        raise ExportError(f"{where}: OPFORGE['implements'] must be a list of engine op keys such as "
                          f"'vllm:rms_norm', got {keys!r}")
    return tuple(keys)


def _outputs(model: torch.nn.Module, inputs: list) -> int:
    with torch.no_grad():
        out = model(*inputs)
    if isinstance(out, torch.Tensor):
        return 1
    if isinstance(out, (tuple, list)) and out and all(isinstance(t, torch.Tensor) for t in out):
        return len(out) if len(out) > 1 else -1  # -1: a one-tensor tuple
    if out is None:
        return 0
    raise ExportError(f"the reference returns {type(out).__name__}; an exported op returns tensors")


def _as_json(value: Any) -> Any:
    """The value as JSON if it is plain data (numbers, strings, lists), else None."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return None


def describe_spec(pk: PromotedKernel) -> dict[str, Any]:
    """Load the spec source at the verified sizes: input signature and output arity."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{pk.spec_name}.py"
        path.write_text(pk.spec_source, encoding="utf-8")
        sizes = pk.evaluation.verdict.get("sizes", {}).get("used") or {}
        module = spec_loader.load_module(path, sizes)
        spec_loader.check_model(module, path)
        torch.manual_seed(0)
        lists = spec_loader.input_lists(module, path)
        init = list(module.get_init_inputs())
        torch.manual_seed(0)
        model = module.Model(*init)
        stateless = not any(True for _ in model.parameters()) and not any(True for _ in model.buffers())
        return {"inputs": _inputs(module, lists), "outputs": _outputs(model, lists[0]), "stateless": stateless,
                "init_args": _as_json([init, {}]),
                "init_size_args": tuple(i for i, a in enumerate(init) if type(a) is int and a in sizes.values()),
                "mutates": tuple(getattr(module, "OPFORGE", {}).get("mutates", ())), "sizes": dict(sizes),
                "dtype_sets": dtype_sets(lists), "implements": implements(getattr(module, "OPFORGE", {}), pk.spec_name)}


def _impl(pk: PromotedKernel, module: str) -> ArchImpl:
    verdict = pk.evaluation.verdict
    keys = export_hooks(pk.version.backend).launch_keys
    launches = [{k: kern.get(k) for k in keys} for kern in (verdict.get("build") or {}).get("kernels", [])]
    return ArchImpl(
        backend=pk.version.backend, arch=arch_key(pk.evaluation.hardware, pk.version.backend), module=module,
        version=pk.version.number,
        candidate_id=pk.version.candidate_id, candidate_sha256=pk.candidate_sha256, drafter=pk.drafter,
        hardware=pk.evaluation.hardware, hardware_name=str(pk.evaluation.hardware_info.get("name", "")),
        source=pk.source, timings=pk.evaluation.timings, launches=launches,
        config=(pk.meta or {}).get("config"),
        variants=[{k: v.get(k) for k in ("shapes", "atol", "rtol")} for v in verdict.get("variants", [])],
        level=pk.evaluation.level, verified_on=pk.evaluation.verified_on,
    )


def group_ops(promoted: list[PromotedKernel]) -> tuple[list[OpExport], list[str]]:
    """One OpExport per op (a GPU-verified version is preferred as its primary module), and notes
    on the active versions left out."""
    by_op: dict[str, list[PromotedKernel]] = {}
    skipped: dict[str, list[str]] = {}
    for pk in promoted:
        if pk.problem:  # active, but no longer fit to ship: left out, and said so
            skipped.setdefault(pk.version.op, []).append(
                f"{pk.version.op}: left out v{pk.version.number} on {pk.version.hardware}: {pk.problem}")
        else:
            by_op.setdefault(pk.version.op, []).append(pk)
    ops = [_op(name, pks, tuple(skipped.pop(name, ()))) for name, pks in sorted(by_op.items())]
    classes = [op.class_name for op in ops]
    clash = sorted({op.name for op in ops if classes.count(op.class_name) > 1})
    if clash:
        raise ExportError(f"ops {', '.join(clash)} would export the same class name; rename one in OPFORGE['name']")
    return ops, [note for notes in skipped.values() for note in notes]


def _module_name(op: str, backend: str, arch: str, taken: dict[str, str]) -> str:
    """The op's first kernel module is named after the op (it carries the entry points); the
    others by architecture (`<op>__sm_90`), or by the backend's module tag, then tag and
    architecture if that is taken (`<op>__cuda`, `<op>__cuda_sm_90`). A backend whose kernels are
    modules of their own (Triton-Ascend: imported only where triton-ascend's `triton` is the
    importable one) never carries the entry points: `<op>__npu` always (an op with no other kernel
    gets an entry-points-only module, see render.py)."""
    hooks = export_hooks(backend)
    if hooks.own_module:
        return f"{op}__{arch}"
    if not taken:
        return op
    tag = hooks.module_tag
    if tag and f"{op}__{tag}" not in taken.values():
        return f"{op}__{tag}"
    return f"{op}__{tag}_{arch}" if tag else f"{op}__{arch}"


DEVICES = (f"{GPU_DEVICE}/", "npu/")  # fingerprints of a kernel verified on a device (harness.hardware)


def _op(name: str, pks: list[PromotedKernel], notes_in: tuple[str, ...] = ()) -> OpExport:
    check_op_name(name)
    # In the table's order (Triton first: its primary module and names stay as they were before
    # CUDA, then CUDA, then Triton-Ascend); device-verified before the CPU's.
    order = exported("module")
    pks = sorted(pks, key=lambda pk: (order.index(pk.version.backend),
                                      not pk.evaluation.hardware.startswith(DEVICES), pk.evaluation.hardware))
    lead = pks[0]  # every version here is of the op's current spec (older ones arrive with a problem)
    notes = list(notes_in)
    impls, modules = [], {}
    for pk in pks:
        backend, arch = pk.version.backend, arch_key(pk.evaluation.hardware, pk.version.backend)
        if (backend, arch) in {(i.backend, i.arch) for i in impls}:
            notes.append(f"{name}: v{pk.version.number} on {pk.evaluation.hardware} shares its architecture "
                         f"with an earlier {backend} one and is not exported")
            continue
        if pk.candidate_sha256 not in modules:
            modules[pk.candidate_sha256] = _module_name(name, backend, arch, modules)
        impls.append(_impl(pk, modules[pk.candidate_sha256]))
    info = describe_spec(lead)
    return OpExport(name=name, class_name=class_name(name), spec_source=lead.spec_source,
                    spec_sha256=lead.spec_sha256, inputs=info["inputs"], outputs=info["outputs"],
                    stateless=info["stateless"], init_args=info["init_args"],
                    init_size_args=info["init_size_args"],
                    mutates=info["mutates"], sizes_used=info["sizes"], impls=tuple(impls), notes=tuple(notes),
                    dtype_sets=info["dtype_sets"], implements=info["implements"])
