"""Op specs: KernelBench-format Python files (`Model`, `get_inputs`, `get_init_inputs`).

Optional extras: `OPFORGE = dict(name=..., dtypes=[...], atol=..., rtol=..., tags=[...], mutates=[...],
fixed_sizes=[...])` and `get_input_variants()` returning more input lists that must all pass.

A spec is the user's own trusted code, so the harness imports it in-process to validate it; candidate
kernels are never imported here (see harness/worker.py).
"""
from __future__ import annotations

import hashlib
import importlib.util
import itertools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from harness.errors import SpecError

# Module-level ints at least this large are treated as sizes a CPU run may shrink; smaller ones
# (a reduction dim, a kernel size) are semantics and are left alone.
MIN_SHRINKABLE = 16
_counter = itertools.count()


@dataclass(frozen=True)
class OpSpec:
    """A validated spec: where it came from, its identity, and the sizes verification will use."""

    path: Path
    name: str
    source: str
    sha256: str
    meta: dict[str, Any]
    sizes_declared: dict[str, int]
    sizes_used: dict[str, int]
    input_bytes: int
    n_variants: int
    input_dtypes: tuple[str, ...] = field(default=())
    tags: tuple[str, ...] = field(default=())

    @property
    def is_float32(self) -> bool:
        """A float32 op: its float inputs are float32 (precision tricks are judged against that)."""
        floats = [d for d in self.input_dtypes if d.startswith(("float", "bfloat"))]
        return bool(floats) and all(d in ("float32", "float64") for d in floats)


def load_module(path: Path | str) -> ModuleType:
    """Import a spec file under a private module name; any failure becomes one SpecError line."""
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"{path}: spec file not found")
    name = f"_opforge_spec_{next(_counter)}_{path.stem}"
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise SpecError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(loader_spec)
    try:
        source = path.read_text(encoding="utf-8")
        compile(source, str(path), "exec")
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not UTF-8 text") from None
    except SyntaxError as exc:
        raise SpecError(f"{path}: line {exc.lineno}: syntax error: {exc.msg}") from None
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:  # the user's module raised while importing: report, don't trace
        raise SpecError(f"{path}: importing the spec failed: {type(exc).__name__}: {exc}") from None
    finally:
        sys.modules.pop(name, None)
    return module


def op_name(module: ModuleType, path: Path) -> str:
    meta = getattr(module, "OPFORGE", None) or {}
    return str(meta.get("name") or path.stem)


def declared_sizes(module: ModuleType) -> dict[str, int]:
    """KernelBench-style module-level integer constants (`batch_size = 4096`)."""
    fixed = set((getattr(module, "OPFORGE", None) or {}).get("fixed_sizes", []))
    return {
        k: v
        for k, v in vars(module).items()
        if type(v) is int and not k.startswith("_") and k not in fixed
    }


def apply_sizes(module: ModuleType, sizes: dict[str, int]) -> None:
    for key, value in sizes.items():
        setattr(module, key, value)


def _tensors(obj: Any) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in _tensors(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in _tensors(item)]
    return []


def call_inputs(module: ModuleType, fn_name: str, path: Path) -> list:
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise SpecError(f"{path}: {fn_name}() is missing")
    try:
        value = fn()
    except Exception as exc:
        raise SpecError(f"{path}: {fn_name}() raised {type(exc).__name__}: {exc}") from None
    if not isinstance(value, (list, tuple)):
        raise SpecError(f"{path}: {fn_name}() must return a list, got {type(value).__name__}")
    return list(value)


def input_lists(module: ModuleType, path: Path) -> list[list]:
    """The main inputs followed by every declared variant; each must hold at least one tensor."""
    lists = [call_inputs(module, "get_inputs", path)]
    if hasattr(module, "get_input_variants"):
        variants = call_inputs(module, "get_input_variants", path)
        for i, variant in enumerate(variants):
            if not isinstance(variant, (list, tuple)):
                raise SpecError(f"{path}: get_input_variants()[{i}] must be a list of inputs")
            lists.append(list(variant))
    for i, inputs in enumerate(lists):
        where = "get_inputs()" if i == 0 else f"get_input_variants()[{i - 1}]"
        if not _tensors(inputs):
            raise SpecError(f"{path}: {where} returned no tensors")
        bad = [type(x).__name__ for x in inputs if not isinstance(x, (torch.Tensor, int, float, bool))]
        if bad:
            raise SpecError(f"{path}: {where} returned non-tensor inputs ({', '.join(bad)})")
    return lists


def meta_footprint(module: ModuleType, path: Path) -> tuple[int, int]:
    """(elements, bytes) of the main inputs and the reference outputs, computed on the meta device
    so that a spec asking for 64 GiB is measured without allocating it."""
    with torch.device("meta"):
        inputs = call_inputs(module, "get_inputs", path)
        tensors = _tensors(inputs)
        init = call_inputs(module, "get_init_inputs", path)
        try:
            model = module.Model(*init)
        except Exception as exc:
            raise SpecError(f"{path}: Model(*get_init_inputs()) raised {type(exc).__name__}: {exc}") from None
        try:
            tensors += _tensors(model(*inputs))
        except Exception:  # some ops have no meta kernel: size the inputs alone
            pass
    elements = sum(t.numel() for t in tensors)
    return elements, sum(t.numel() * t.element_size() for t in tensors)


def shrink_sizes(module: ModuleType, path: Path, max_elements: int) -> dict[str, int]:
    """Halve the largest size constant until the main problem fits `max_elements`.

    A constant whose halving breaks the spec (a divisibility rule, say) is restored and frozen."""
    sizes = declared_sizes(module)
    frozen: set[str] = set()
    for _ in range(200):
        elements, _bytes = meta_footprint(module, path)
        candidates = [k for k, v in sizes.items() if v >= 2 * MIN_SHRINKABLE and k not in frozen]
        if elements <= max_elements or not candidates:
            break
        key = max(candidates, key=lambda k: sizes[k])
        old = sizes[key]
        sizes[key] = old // 2
        apply_sizes(module, {key: sizes[key]})
        try:
            meta_footprint(module, path)
        except SpecError:
            sizes[key] = old
            apply_sizes(module, {key: old})
            frozen.add(key)
    return sizes


def _check_model(module: ModuleType, path: Path) -> None:
    model_cls = getattr(module, "Model", None)
    if not (isinstance(model_cls, type) and issubclass(model_cls, torch.nn.Module)):
        raise SpecError(f"{path}: no `class Model(torch.nn.Module)` found")
    if not hasattr(module, "get_init_inputs"):
        module.get_init_inputs = lambda: []


def load_spec(path: Path | str, *, max_elements: int | None, max_bytes: int) -> OpSpec:
    """Load and validate a spec. `max_elements` (CPU runs) shrinks size constants to fit;
    `max_bytes` bounds the main problem's inputs and outputs after shrinking."""
    path = Path(path)
    module = load_module(path)
    _check_model(module, path)
    declared = declared_sizes(module)
    try:
        used = shrink_sizes(module, path, max_elements) if max_elements else dict(declared)
        _elements, nbytes = meta_footprint(module, path)
    except SpecError:
        raise
    except Exception as exc:
        raise SpecError(f"{path}: sizing the inputs failed: {type(exc).__name__}: {exc}") from None
    if nbytes > max_bytes:
        raise SpecError(
            f"{path}: inputs and outputs need {nbytes / 2**30:.1f} GiB (limit {max_bytes / 2**30:.1f} GiB); "
            "lower the size constants or list them in OPFORGE['fixed_sizes'] only if they must stay"
        )
    torch.manual_seed(0)
    lists = input_lists(module, path)
    source = path.read_text(encoding="utf-8")
    meta = dict(getattr(module, "OPFORGE", None) or {})
    return OpSpec(
        path=path.resolve(),
        name=op_name(module, path),
        source=source,
        sha256=hashlib.sha256(source.encode()).hexdigest(),
        meta=meta,
        sizes_declared=declared,
        sizes_used={k: used[k] for k in declared},
        input_bytes=nbytes,
        n_variants=len(lists),
        input_dtypes=tuple(sorted({str(t.dtype).removeprefix("torch.") for xs in lists for t in _tensors(xs)})),
        tags=tuple(meta.get("tags", ())),
    )
