"""Op specs: KernelBench-format Python files (`Model`, `get_inputs`, `get_init_inputs`).

Optional extras: `OPFORGE = dict(name=..., dtypes=[...], atol=..., rtol=..., tags=[...], mutates=[...],
fixed_sizes=[...])` and `get_input_variants()` returning more input lists that must all pass.

A spec is the user's own trusted code, so the harness imports it in-process to validate it; candidate
kernels are never imported here (see harness/worker.py). A spec at other sizes is its source run
again with its size constants rewritten (harness/sizes.py), so values derived from them follow.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import itertools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import torch

from opforge.harness import cost, shapefacts
from opforge.harness.errors import SpecError
from opforge.harness.mode import DEFAULT as DEFAULT_MODE, mode_of
from opforge.harness.sizes import Bounded, SizeLimit, size_constants, with_sizes

# Module-level ints at least this large are treated as sizes a CPU run may shrink; smaller ones
# (a reduction dim, a kernel size) are semantics and are left alone.
MIN_SHRINKABLE = 16
# A CPU run sized by its cost may halve a size on below MIN_SHRINKABLE down to this, still over its budget,
# as long as the spec keeps the shape properties its declared sizes have (harness/shapefacts.py).
BUDGET_FLOOR = 2
# A spec whose inputs are built from data is sized by a real call: stopped past this many seconds,
# and while shrinking past this many times the element budget (its temporaries count too).
SIZING_SECONDS = 60.0
SIZING_SLACK = 4
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
    # a CPU run sized by its cost (harness/cost.py): {"budget_s", "estimated_s"} at the sizes used
    cost: dict[str, float] | None = field(default=None)
    mode: str = field(default=DEFAULT_MODE)  # the reference's (harness/mode.py): train as constructed, or eval

    @property
    def is_float32(self) -> bool:
        """A float32 op: its float inputs are float32 (precision tricks are judged against that), and
        none is int8 or float8: an op given quantised operands (a W8A8 GEMM) may multiply them at their
        own width (int8 or FP8 tensor cores), which in a float32 op would be a precision trick."""
        floats = [d for d in self.input_dtypes if d.startswith(("float", "bfloat"))]
        quantised = any(d == "int8" or d.startswith("float8") for d in self.input_dtypes)
        return bool(floats) and all(d in ("float32", "float64") for d in floats) and not quantised

    def module(self, sizes: dict[str, int] | None = None) -> ModuleType:
        """A fresh run of the spec's source at the sizes used, or at `sizes` over them: the one way
        the judge, the stress cases and the exporter get the spec at a size."""
        module = load_module(self.path, {**self.sizes_used, **(sizes or {})}, source=self.source)
        check_model(module, self.path)
        return module


def read_source(path: Path | str) -> str:
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"{path}: spec file not found")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not UTF-8 text") from None


def load_module(path: Path | str, sizes: dict[str, int] | None = None, *, source: str | None = None) -> ModuleType:
    """Run a spec's source (default: the file's) as a fresh module under a private name, its size
    constants set to `sizes` first; any failure becomes one SpecError line."""
    path = Path(path)
    source = read_source(path) if source is None else source
    name = f"_opforge_spec_{next(_counter)}_{path.stem}"
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None:
        raise SpecError(f"{path}: not a Python file")
    try:
        tree = with_sizes(ast.parse(source, str(path)), sizes or {})
        code = compile(tree, str(path), "exec")
    except SyntaxError as exc:
        raise SpecError(f"{path}: line {exc.lineno}: syntax error: {exc.msg}") from None
    except ValueError as exc:  # null bytes
        raise SpecError(f"{path}: not Python source: {exc}") from None
    module = importlib.util.module_from_spec(loader_spec)
    module.__opforge_sizes__ = size_constants(tree)
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except Exception as exc:  # the user's module raised while importing: report, don't trace
        raise SpecError(f"{path}: importing the spec failed: {type(exc).__name__}: {exc}") from None
    finally:
        sys.modules.pop(name, None)
    return module


def op_name(module: ModuleType, path: Path) -> str:
    meta = getattr(module, "OPFORGE", None) or {}
    return str(meta.get("name") or path.stem)


def declared_sizes(module: ModuleType) -> dict[str, int]:
    """KernelBench-style size constants (`batch_size = 4096`, see harness/sizes.py) at the values
    this module ran with, less `OPFORGE["fixed_sizes"]`."""
    fixed = set((getattr(module, "OPFORGE", None) or {}).get("fixed_sizes", []))
    constants = getattr(module, "__opforge_sizes__", {})
    values = vars(module)
    return {k: v for k, v in constants.items()
            if not k.startswith("_") and k not in fixed and type(values.get(k)) is int and values[k] == v}


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
    except SizeLimit:  # a bounded sizing call stopped it: too large to measure, not broken
        raise
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


def footprint(module: ModuleType, path: Path, *, max_bytes: int, max_elements: int | None = None) -> tuple[int, int]:
    """(elements, bytes) of the main inputs and the reference outputs: on meta tensors where the
    spec allows it, so a spec asking for 64 GiB is measured without allocating it; else (inputs
    built from data: `.item()`, `int(tensor)`) by a real call within the limits (raises SizeLimit)."""
    try:
        return meta_footprint(module, path)
    except SpecError:
        return real_footprint(module, path, max_bytes, max_elements)


def meta_footprint(module: ModuleType, path: Path) -> tuple[int, int]:
    with torch.device("meta"):
        inputs = call_inputs(module, "get_inputs", path)
        model = _model(module, call_inputs(module, "get_init_inputs", path), path)
    return _measure(inputs, model)


def real_footprint(module: ModuleType, path: Path, max_bytes: int, max_elements: int | None) -> tuple[int, int]:
    """The inputs and the model built for real under `Bounded`; the forward still runs on meta."""
    with torch.random.fork_rng(devices=[]), Bounded(max_bytes, max_elements, SIZING_SECONDS):
        torch.manual_seed(0)  # data-dependent shapes: the same sizes on every load
        inputs = call_inputs(module, "get_inputs", path)
        model = _model(module, call_inputs(module, "get_init_inputs", path), path)
    return _measure([x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs], model.to("meta"))


def _model(module: ModuleType, init: list, path: Path) -> Any:
    try:
        return module.Model(*init)
    except SizeLimit:
        raise
    except Exception as exc:
        raise SpecError(f"{path}: Model(*get_init_inputs()) raised {type(exc).__name__}: {exc}") from None


def _measure(inputs: list, model: Any) -> tuple[int, int]:
    tensors = _tensors(inputs)
    if model is not None:
        try:
            tensors += _tensors(model(*inputs))
        except Exception:  # some ops have no meta kernel, or need values: size the inputs alone
            pass
    return sum(t.numel() for t in tensors), sum(t.numel() * t.element_size() for t in tensors)


# Size constants that are a convolution's or a norm's semantics, not its extent: kept as declared
# (channels, spatial sizes and batch shrink instead; a size under MIN_SHRINKABLE is kept anyway).
KEPT = re.compile(r"kernel|stride|pad|dilat|group", re.IGNORECASE)


def work(module: ModuleType, path: Path) -> list[tuple[int, float]] | None:
    """Per input list (the main one first, then the variants): (elements of inputs and outputs, FLOPs
    with convolutions weighted: harness/cost.py), on meta tensors; None where the spec cannot run on
    them (sizes read from data, an op with no meta kernel)."""
    from torch.utils.flop_counter import FlopCounterMode

    try:
        with torch.device("meta"), torch.no_grad():
            lists = input_lists(module, path)
            model = module.Model(*module.get_init_inputs())
            found = []
            for inputs in lists:
                with FlopCounterMode(display=False) as counter, cost.ConvSteps() as convs:
                    out = model(*inputs)
                found.append((sum(t.numel() for t in _tensors(inputs) + _tensors(out)), cost.flops(counter, convs.steps)))
            return found
    except Exception:
        return None


def shrink_sizes(load: Callable[[dict[str, int]], ModuleType], sizes: dict[str, int], path: Path,
                 max_elements: int, max_bytes: int, over_budget: Callable[[ModuleType], float | None] | None = None
                 ) -> dict[str, int]:
    """Halve the largest size constant until the main problem fits `max_elements` and, with
    `over_budget`, the run's estimated cost fits its budget, the spec run again at each step
    (`load`). A constant whose halving breaks the spec (a divisibility rule, a forward that no longer
    runs, a shape fact of the declared sizes lost: harness/shapefacts.py) is kept and frozen, as are
    kernel sizes, strides, paddings, dilations and groups (KEPT); a step whose real sizing call passes
    its limits counts as too large. Sized by cost (`over_budget`), sizes halve on below
    MIN_SHRINKABLE down to BUDGET_FLOOR; there the declared sizes' facts must be known."""
    def fits(at: dict[str, int]) -> bool:
        module = load(at)
        try:
            elements = footprint(module, path, max_bytes=max_bytes, max_elements=SIZING_SLACK * max_elements)[0]
        except SizeLimit:  # too large to measure by a real call, unless the constructor itself refuses the sizes
            with torch.device("meta"):
                _model(module, call_inputs(module, "get_init_inputs", path), path)
            return False
        return elements <= max_elements and not (over_budget and over_budget(module))

    inputs_of, model_of = (lambda m: call_inputs(m, "get_inputs", path),
                           lambda m: _model(m, call_inputs(m, "get_init_inputs", path), path))
    declared = shapefacts.facts(load(sizes), inputs_of, model_of)
    done, frozen = fits(sizes), {k for k in sizes if KEPT.search(k)}
    for _ in range(200):
        candidates = [k for k, v in sizes.items() if v >= 2 * MIN_SHRINKABLE and k not in frozen]
        if not candidates and over_budget:  # sized by cost: on below the floor, its shapes checked
            candidates = [k for k, v in sizes.items() if v >= 2 * BUDGET_FLOOR and k not in frozen]
        if done or not candidates:
            break
        key = max(candidates, key=lambda k: sizes[k])
        trial = {**sizes, key: sizes[key] // 2}
        try:
            if declared is not None or trial[key] < MIN_SHRINKABLE:
                lost = shapefacts.kept(declared, shapefacts.facts(load(trial), inputs_of, model_of))
                if lost:
                    raise SpecError(lost)
            if trial[key] < MIN_SHRINKABLE and not _pays(over_budget, load, sizes, trial):
                raise SpecError("below the floor, a halving that does not cut the estimate is not taken")
            done, sizes = fits(trial), trial
        except SpecError:
            frozen.add(key)
    return sizes


def _pays(over_budget: Callable[[ModuleType], float | None], load: Callable[[dict[str, int]], ModuleType],
          sizes: dict[str, int], trial: dict[str, int]) -> bool:
    """Does halving below the floor cut the run's estimate by a tenth or more (or bring it within the
    budget)? A run whose cost is elsewhere (variants of fixed sizes) keeps its main case at the floor."""
    now, then = over_budget(load(sizes)), over_budget(load(trial))
    return now is None or then is None or then <= 0.9 * now


def check_model(module: ModuleType, path: Path) -> None:
    """SpecError unless the loaded spec module has a `class Model(torch.nn.Module)`; a missing
    get_init_inputs means no init arguments (the exporter checks the specs it ships with this too)."""
    model_cls = getattr(module, "Model", None)
    if not (isinstance(model_cls, type) and issubclass(model_cls, torch.nn.Module)):
        raise SpecError(f"{path}: no `class Model(torch.nn.Module)` found")
    if not hasattr(module, "get_init_inputs"):
        module.get_init_inputs = lambda: []


def load_spec(path: Path | str, *, max_elements: int | None, max_bytes: int, backend: str | None = None,
              budget_s: float | None = None) -> OpSpec:
    """Load and validate a spec. `max_elements` (CPU runs) shrinks size constants to fit, and with
    `budget_s` until the CPU run's estimated seconds on `backend` fit too (harness/cost.py);
    `max_bytes` bounds the main problem's inputs and outputs after shrinking."""
    path = Path(path)
    source = read_source(path)
    module = _loaded(path, source, None)
    declared = declared_sizes(module)
    over = None
    if budget_s is not None and cost.model(backend) is not None:
        def over(at: ModuleType) -> float | None:  # the estimated seconds where they pass the budget
            estimate = cost.estimate_s(backend, work(at, path), len(declared))
            return estimate if estimate is not None and estimate > budget_s else None
    used, module, nbytes = _sized(path, source, module, declared, max_elements, max_bytes, over)
    estimate = cost.estimate_s(backend, work(module, path), len(declared)) if over else None
    torch.manual_seed(0)
    lists = input_lists(module, path)
    meta = dict(getattr(module, "OPFORGE", None) or {})
    try:
        mode = mode_of(meta)
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None
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
        cost={"budget_s": budget_s, "estimated_s": round(estimate, 1)} if estimate is not None else None,
        mode=mode,
    )


def _loaded(path: Path, source: str, sizes: dict[str, int] | None) -> ModuleType:
    module = load_module(path, sizes, source=source)
    check_model(module, path)
    return module


def _sized(path: Path, source: str, module: ModuleType, declared: dict[str, int], max_elements: int | None,
           max_bytes: int, over_budget: Callable[[ModuleType], float | None] | None = None
           ) -> tuple[dict[str, int], ModuleType, int]:
    """The sizes to use, the spec run at them, and the bytes of its main inputs and outputs."""
    try:
        used = dict(declared)
        if max_elements:
            used = shrink_sizes(lambda at: _loaded(path, source, at), used, path, max_elements, max_bytes, over_budget)
            module = _loaded(path, source, used) if used != declared else module
        _elements, nbytes = footprint(module, path, max_bytes=max_bytes)
    except SizeLimit as exc:
        raise SpecError(f"{path}: sizing the inputs by a real call (their shapes depend on data) stopped: {exc}; "
                        "lower the size constants") from None
    except SpecError:
        raise
    except Exception as exc:
        raise SpecError(f"{path}: sizing the inputs failed: {type(exc).__name__}: {exc}") from None
    if nbytes > max_bytes:
        raise SpecError(
            f"{path}: inputs and outputs need {nbytes / 2**30:.1f} GiB (limit {max_bytes / 2**30:.1f} GiB); "
            "lower the size constants or list them in OPFORGE['fixed_sizes'] only if they must stay"
        )
    return used, module, nbytes
