"""The judge: the trusted side of a verification, in the process that asked for it (never the
candidate's). It runs the reference, makes every input set and the call plan, sends them to the
candidate's sandboxed process as data, reads back the outputs as copies (size-checked, loaded with
`weights_only`), and compares, so no candidate can reach the reference, the comparison or the verdict.

`prepare` builds the `Material` (models, cases with their expected outputs, plan); `judge_run`
turns the candidate process's report and outputs into the run part of a verdict.
"""
from __future__ import annotations

import copy
import inspect
import io
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from opforge.harness import stress
from opforge.harness.compare import compare_outputs, flatten_outputs, wide
from opforge.harness.guards import count_sentinel
from opforge.harness.hardware import GPU_DEVICE
from opforge.harness.mode import randomness, set_mode
from opforge.harness.spec import OpSpec, input_lists
from opforge.harness.spec import footprint as spec_footprint

ANTICHEAT = ("constant-output", "torch-compute", "aliasing", "input-mutation", "cached-output",
             "partial-output", "low-precision", "patched", "threads", "subprocess", "no-launch",
             "kernel-independent", "below-dispatcher", "global-state", "output-type", "host-compute", "stateful")
# The check inside the numerics step that each finding's code fails (harness/ladder.py CHECKS).
CHECK_OF = {"load-error": "load", "reference-error": "load", "init-error": "run", "runtime-error": "run",
            "oom": "run", "mismatch": "compare", "no-variants": "compare", **{c: "anticheat" for c in ANTICHEAT},
            # the CPU run's memory model (backends/triton/memory.py): what hardware would do differently
            "out-of-bounds": "run", "race": "run", "order-dependent": "compare",
            "out-of-resources": "run",  # a launch over the GPU's limits (backends/cuda/emulator/limits.py)
            # the AscendC emulator's (backends/ascendc/emulator/errors.py)
            **{c: "run" for c in ("deadlock", "use-after-free", "misaligned", "ub-overflow", "step-limit",
                                  "host-error", "bad-argument", "crash")}}
MAX_REASONS = 12
# CPU: repeated calls on the same inputs after the trials; consecutive ones must leave the candidate's
# state unchanged (harness/callstate.py; CUDA's static storage: backends/cuda/emulator/state.py), so
# no call count can choose its result and a few calls show what many would: enough for the program
# orders to rotate (grid, reverse, shuffles) and two perturbed inputs to hide among them
REPEAT_CALLS = 8
LARGER_BUDGET = 1.25  # each hidden larger shape: at most this many times the main problem's elements
STRESS_MIN_ELEMENTS = 1024  # a stress case on fewer elements than this would hide overflow and tiling bugs  # the larger hidden shape: the first factor whose inputs fit the budget


@dataclass
class Case:
    label: str
    kind: str  # trial | perturbed | stress | repeat
    model: int
    inputs: list
    expected: list
    variant: int | None = None
    noise: list | None = None  # per output, the reference's own max abs error against float64 (scaled cases)


@dataclass
class Material:
    models: list[dict] = field(default_factory=list)  # what the candidate's process gets: init, state, seed
    refs: list[Any] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)
    plan: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    mutates: list[int] = field(default_factory=list)
    aliases: list[list[int]] = field(default_factory=list)  # [output, argument]: the reference returns that argument itself
    bench: dict | None = None

    def add(self, case: Case, calls: int = 1, **step) -> int:
        self.cases.append(case)
        index = len(self.cases) - 1
        self.plan += [{"case": index, "model": case.model, **step} for _ in range(calls)]
        return index

    def payload(self) -> bytes:
        buf = io.BytesIO()
        torch.save({"models": self.models, "cases": [[_cpu(x) for x in c.inputs] for c in self.cases],
                    "plan": self.plan, "mutates": self.mutates, "aliases": self.aliases,
                    "bench": self.bench}, buf)
        return buf.getvalue()

    def output_cap(self) -> int:
        """Bytes the outputs file may take: every call's expected outputs, with room to spare."""
        per_case = [sum(t.numel() * t.element_size() for t in c.expected) for c in self.cases]
        total = sum(per_case[step["case"]] for step in self.plan) + 8 * max(per_case, default=0)
        return int(total * 1.25) + (4 << 20)


def _cpu(x: Any) -> Any:
    return x.detach().cpu() if isinstance(x, torch.Tensor) else x


class Reference:
    """The spec's module at the sizes used, and its models, in the judge's process. The spec at
    another size is its source run again (`OpSpec.module`), so values derived from the size
    constants follow them."""

    def __init__(self, spec: OpSpec, device: str) -> None:
        self.spec, self.device = spec, device
        self.module = spec.module()
        names = list(inspect.signature(self.module.Model.forward).parameters)[1:]
        self.mutates = [names.index(n) for n in spec.meta.get("mutates", []) if n in names]
        self.mode = spec.mode

    def shapes_model(self, sizes: dict[str, int]) -> bool:
        """Do these size constants change the constructor's arguments?"""
        def init(module) -> str:
            args = module.get_init_inputs()
            return repr([tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in args])

        try:
            return init(self.spec.module(sizes)) != init(self.module)
        except Exception:  # the spec cannot even build its arguments at that size
            return True

    def footprint(self, sizes: dict[str, int]) -> int:
        """Elements of the main inputs and outputs at `sizes` over the sizes used (meta tensors where
        the spec allows, else a real call bounded to a few times the main problem's bytes)."""
        limit = 4 * self.spec.input_bytes + (64 << 20)
        try:
            return spec_footprint(self.spec.module(sizes), Path(self.spec.path), max_bytes=limit)[0]
        except Exception:  # the spec rejects these sizes, or passes the limit: as good as too large
            return 1 << 62

    def model(self, seed: int, sizes: dict[str, int] | None = None) -> tuple[dict, Any]:
        """The reference's model at the sizes used (or at `sizes` over them: the constructor's
        arguments follow), and what the candidate's process needs to build its own alike."""
        module = self.spec.module(sizes) if sizes else self.module
        init = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
        torch.manual_seed(seed)
        ref = module.Model(*init)
        stress.spread_identities(ref, seed)  # no identity left for a kernel to drop unseen
        state = {k: v.detach().cpu().clone() for k, v in ref.state_dict().items()}
        entry = {"init": list(init), "state": state, "seed": seed, "mode": self.mode}
        return entry, set_mode(ref.to(self.device), self.mode)

    def inputs(self, seed: int, sizes: dict[str, int] | None = None) -> list[list]:
        """Every input list at the sizes used, or at `sizes` over them (the spec run again)."""
        module = self.spec.module(sizes) if sizes else self.module
        torch.manual_seed(seed)
        lists = input_lists(module, Path(self.spec.path))
        return [[x.to(self.device) if isinstance(x, torch.Tensor) else x for x in xs] for xs in lists]

    def run(self, ref: Any, inputs: list) -> list:
        """Flattened outputs, then the post-call values of the declared in-place arguments."""
        args = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            out = ref(*args)
        return [t.detach() for t in flatten_outputs(out)] + [args[i].detach() for i in self.mutates]

    def aliases(self, ref: Any, inputs: list) -> list[list[int]]:
        """[output, argument] pairs where the reference returns a declared in-place argument itself
        (`return key_cache`): the candidate may too; any other output sharing an input's memory is refused."""
        args = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            outs = flatten_outputs(ref(*args))
        return [[k, i] for k, o in enumerate(outs) for i in self.mutates
                if isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() == args[i].untyped_storage().data_ptr()]

    def float64_error(self, ref: Any, inputs: list, expected: list) -> list | None:
        """Per output, how far the reference is from itself run in float64 on the same inputs (its
        own rounding error: the accuracy a kernel can be held to); None for an output that is not
        a finite float, and None in all when the reference cannot run in float64."""
        try:
            model64 = copy.deepcopy(ref).double()
            args = [x.detach().clone().double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                    for x in inputs]
            with torch.no_grad():
                truth = flatten_outputs(model64(*args))
        except Exception:  # a reference that builds float32 tensors of its own, or copies nothing
            return None
        outputs = len(expected) - len(self.mutates)
        if len(truth) != outputs:
            return None
        noise = []
        for e, t in zip(expected[:outputs], truth):
            # float8 outputs are quantised results, not sums: their rounding is the op, not noise
            ok = (isinstance(e, torch.Tensor) and isinstance(t, torch.Tensor) and e.is_floating_point()
                  and e.element_size() > 1 and t.shape == e.shape and bool(torch.isfinite(e).all())
                  and bool(torch.isfinite(wide(t)).all()))
            noise.append(float((e.double() - t.double()).abs().max()) if ok and e.numel() else None)
        return noise + [None] * len(self.mutates)


class ReferenceError_(Exception):
    """The reference itself failed on the spec's own inputs: the spec's problem, not the candidate's."""


def prepare(spec: OpSpec, seed: int, trials: int, device: str) -> Material:
    """Everything the candidate will be called with, and what the reference returned for it."""
    devices = [torch.cuda.current_device()] if device == GPU_DEVICE else []
    with torch.random.fork_rng(devices=devices):
        ref = Reference(spec, device)
        material = Material(mutates=ref.mutates)
        entry, model = ref.model(seed)
        material.models.append(entry)
        material.refs.append(model)
        try:
            base = _add_trials(material, ref, seed, trials)
        except Exception as exc:
            raise ReferenceError_(f"reference-error: the reference failed on the spec's inputs: "
                                  f"{type(exc).__name__}: {str(exc)[:200]}") from None
        if base is not None and not base.expected:
            raise ReferenceError_("reference-error: the reference returns nothing and declares no in-place "
                                  "argument (OPFORGE[\"mutates\"]): there is nothing to compare a kernel with")
        if base is not None and (why := randomness(model, base.inputs)):
            raise ReferenceError_(f"reference-error: {why}")
        if base is not None and ref.mutates:
            material.aliases = ref.aliases(model, base.inputs)
        _add_stress(material, ref, spec, base, _stress_base(material), seed)
        _add_repeats(material, ref, base, seed, device)
        if base is not None:  # last, so a cache the probe fills cannot shape the other calls
            material.plan.append({"case": material.cases.index(base), "model": 0, "noop": True})
    return material


def _add_trials(material: Material, ref: Reference, seed: int, trials: int) -> Case | None:
    """Seeded trials of every variant; returns the first main case."""
    base = None
    for trial in range(trials):
        for variant, inputs in enumerate(ref.inputs(seed + trial)):
            case = Case(f"variant {variant}", "trial", 0, inputs, ref.run(material.refs[0], inputs), variant)
            case.noise = ref.float64_error(material.refs[0], inputs, case.expected)  # the tolerance's floor
            material.add(case)
            base = base or case
    return base


def _add_perturbed(material: Material, ref: Reference, case: Case, gen: torch.Generator) -> int | None:
    inputs = stress.perturbed(case.inputs, gen)
    if inputs is None:
        return None
    return material.add(Case(f"{case.label} perturbed", "perturbed", case.model, inputs,
                             ref.run(material.refs[case.model], inputs)))


def _try_case(material: Material, ref: Reference, base: Case, label: str, inputs: list | None,
              check_finite: bool = True, same_values: bool = False, noise: bool = False, model: int = 0) -> bool:
    """Add a stress case where the reference supports it. `same_values`: the inputs are `base`'s
    in another layout, so `base`'s outputs are what to expect (the reference's own kernels for
    that layout may round differently, GroupNorm's channels_last path does by ~1e-3). `noise`:
    measure the reference's own error against float64, which the comparison allows NOISE_FACTOR times."""
    if inputs is None:
        return False
    try:
        expected = ref.run(material.refs[model], inputs)
    except Exception as exc:  # the reference does not support this case: skip it, say why
        material.skipped.append({"case": label, "status": "skipped",
                                 "reason": f"the reference raised {type(exc).__name__}: {str(exc)[:120]}"})
        return False
    if check_finite and not stress.supported(base.expected, expected):
        material.skipped.append({"case": label, "status": "skipped",
                                 "reason": "the reference's outputs are not finite on it"})
        return False
    case = Case(label, "stress", model, inputs, base.expected if same_values else expected)
    if noise:
        case.noise = ref.float64_error(material.refs[model], inputs, expected)
    material.add(case)
    return True


def _stress_base(material: Material) -> Case | None:
    """The case the value and layout stress starts from: the smallest first-trial case of a useful
    size (the interpreter's time grows with it) with more than one row, else the main inputs."""
    first = {c.variant: c for c in reversed(material.cases) if c.kind == "trial"}
    if not first:
        return None
    main = first[0]
    floor = min(STRESS_MIN_ELEMENTS, stress.numel(main.inputs))
    useful = [c for c in first.values() if stress.numel(c.inputs) >= floor and stress.rows(c.inputs) > 1]
    return min(useful, key=lambda c: stress.numel(c.inputs)) if useful else main


def _add_stress(material: Material, ref: Reference, spec: OpSpec, main: Case | None, base: Case | None,
                seed: int) -> None:
    kinds = stress.enabled(spec.meta)
    if base is None or main is None or not kinds:
        return
    if "scaled" in kinds:
        for factor in stress.SCALES:
            _try_case(material, ref, base, f"scaled x{factor:g}", stress.scaled(base.inputs, factor), noise=True)
    if "zeros" in kinds:
        _try_case(material, ref, base, "zeros", stress.zeros(base.inputs))
    if "layouts" in kinds:
        for label, inputs in stress.layouts(base.inputs):
            _try_case(material, ref, base, label, inputs, check_finite=False, same_values=True)
    if "larger" in kinds:
        _add_larger(material, ref, spec, main, seed)


def _add_larger(material: Material, ref: Reference, spec: OpSpec, base: Case, seed: int) -> None:
    """Hidden larger shapes: each size constant grown alone (stress.larger_targets: its declared size
    where the budget allows, else twice the used size plus one), the others halved to pay for it so
    each case stays within LARGER_BUDGET x the main problem's elements. A constant that reaches the
    constructor's arguments gets a model of its own, built again at those sizes on both sides."""
    cap = int(LARGER_BUDGET * ref.footprint(spec.sizes_used))
    for key, tries in stress.larger_targets(spec.sizes_used, spec.sizes_declared).items():
        for target, how in tries:
            sizes = stress.grown_one(spec.sizes_used, key, target, ref.footprint, cap)
            label = "larger " + " ".join(f"{k}={v}" for k, v in sorted((sizes or {key: target}).items(),
                                                                       key=lambda kv: kv[0] != key))
            label += f" ({key} at its {how})" if how == "declared size" else f" ({key} {how})"
            if sizes is None:
                material.skipped.append({"case": label, "status": "skipped", "reason":
                                         f"over the CPU budget of {cap} elements even with the other sizes at 1"})
                continue
            if _add_grown(material, ref, base, label, sizes, seed):
                break


def _add_grown(material: Material, ref: Reference, base: Case, label: str, sizes: dict[str, int], seed: int) -> bool:
    """One larger case at `sizes`, unless the spec rejects them or its leading size (the programs
    of a row-per-program kernel, which the interpreter runs one by one) passes 2x+1 of the main
    case's: a declared batch of 4096 rows against 512 took the layer_norm run 1.6x as long."""
    model = 0
    try:
        inputs = ref.inputs(seed + 101, sizes)[0]
        if stress.rows(inputs) > 2 * stress.rows(base.inputs) + 1:
            material.skipped.append({"case": label, "status": "skipped", "reason":
                                     f"{stress.rows(inputs)} rows: over the CPU budget of 2x+1 of the main case's "
                                     f"{stress.rows(base.inputs)} (the interpreter runs programs one by one)"})
            return False
        if ref.shapes_model(sizes):
            entry, built = ref.model(seed, sizes)
            material.models.append(entry)
            material.refs.append(built)
            model, label = len(material.models) - 1, label[:-1] + ", the model built again at these sizes)"
    except Exception as exc:
        material.skipped.append({"case": label, "status": "skipped",
                                 "reason": f"the spec rejects these sizes: {type(exc).__name__}: {str(exc)[:120]}"})
        return False
    if _try_case(material, ref, base, label, inputs, model=model):
        return True
    if model:  # the reference could not run it: the candidate need not build that model
        material.models.pop(), material.refs.pop()
    return False


def _add_repeats(material: Material, ref: Reference, base: Case | None, seed: int, device: str) -> None:
    """Repeated calls with fresh inputs among them: on a GPU the timed calls themselves (sampled),
    on a CPU (no timing) repeated calls of the smallest trial case."""
    if base is None:
        return
    gen = torch.Generator().manual_seed(seed + 47)
    if device == GPU_DEVICE:
        fresh_inputs = ref.inputs(seed + 9973)[0]
        fresh = [material.add(Case("timed: fresh inputs", "fresh", 0, fresh_inputs,
                                   ref.run(material.refs[0], fresh_inputs)), calls=0)]
        perturbed = _add_perturbed(material, ref, base, gen)
        if perturbed is not None:
            material.plan.pop()  # checked among the timed calls, not as a call of its own
            fresh.append(perturbed)
        material.bench = {"case": material.cases.index(base), "fresh": fresh, "samples": 4,
                          "secret": secrets.randbelow(2**31)}
        return
    # the interpreter's time grows with elements and with programs (often one per row): repeat the
    # case cheapest by both
    trials = [c for c in material.cases if c.kind == "trial" and c.model == 0]
    small = min(trials, key=lambda c: stress.numel(c.inputs) * stress.rows(c.inputs))
    index = material.cases.index(small)
    rng = torch.Generator().manual_seed(seed + 53)
    at = sorted(torch.randperm(REPEAT_CALLS, generator=rng)[:2].tolist())
    for n in range(REPEAT_CALLS):
        if n in at:
            _add_perturbed(material, ref, small, gen)
        material.plan.append({"case": index, "model": 0, "repeat": True})


def main_case(material: Material) -> int:
    return next(i for i, c in enumerate(material.cases) if c.kind == "trial")


def load_outputs(data: bytes | None) -> list | None:
    """The candidate's outputs file, parsed with the safe unpickler only (tensors and plain data)."""
    if data is None:
        return None
    try:
        loaded = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception:  # a forged or truncated file: no outputs at all
        return None
    outputs = loaded.get("outputs") if isinstance(loaded, dict) else None
    return outputs if isinstance(outputs, list) else None


def unwritten(outs: list) -> int:
    """Output elements still holding the allocation sentinel: floats, complex, bool, and integers of
    four bytes or more (a narrower one's sentinel, its minimum, is a value results take)."""
    return sum(count_sentinel(o) for o in outs if isinstance(o, torch.Tensor) and (
        o.is_floating_point() or o.is_complex() or o.dtype == torch.bool or o.element_size() >= 4))
