"""What the worker does with a candidate: the `build` job (AOT-compile its launches for a GPU target)
and the `run` job (seeded trials against the reference, comparison, anti-cheat checks, profiling).

Reasons are `code: detail`; `STAGE_OF` maps each code to the verdict stage that failed.
"""
from __future__ import annotations

import importlib.util
import inspect
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from harness import aot, guards
from harness.compare import compare_outputs, flatten_outputs
from harness.spec import apply_sizes, input_lists, load_module

ANTICHEAT = ("constant-output", "torch-compute", "aliasing", "input-mutation", "cached-output",
             "partial-output", "low-precision", "patched", "threads", "subprocess", "no-launch",
             "kernel-independent")
STAGE_OF = {"load-error": "load", "init-error": "run", "runtime-error": "run", "oom": "run", "mismatch": "compare",
            **{code: "anticheat" for code in ANTICHEAT}}
MAX_REASONS = 12


class Rejected(Exception):
    """The candidate cannot be run at all (import or construction failed)."""


def _import_candidate(path: str) -> ModuleType:
    """A fresh module each time: the build imports it compiled, the CPU run interpreted."""
    sys.modules.pop("opforge_candidate", None)
    spec = importlib.util.spec_from_file_location("opforge_candidate", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["opforge_candidate"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        code = _failure_code(exc, "load-error")
        raise Rejected(f"{code}: importing the candidate raised {_describe(exc)}") from None
    if not isinstance(getattr(module, "ModelNew", None), type):
        raise Rejected("load-error: the candidate defines no ModelNew class")
    return module


MEMORY_ERRORS = ("can't allocate memory", "out of memory", "cannot allocate memory")


def _failure_code(exc: BaseException, default: str) -> str:
    """`oom` for allocation failures (the sandbox's memory limit), else the stage's own code."""
    text = str(exc).lower()
    return "oom" if isinstance(exc, MemoryError) or any(m in text for m in MEMORY_ERRORS) else default


def _describe(exc: BaseException) -> str:
    """`Type: message (candidate line N)` — the line that matters to whoever wrote the kernel."""
    line = ""
    for frame in reversed(inspect.getinnerframes(exc.__traceback__) if exc.__traceback__ else []):
        if frame.filename.endswith("candidate.py") or "opforge_candidate" in frame.filename:
            line = f" (candidate line {frame.lineno})"
            break
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {(message[-1] if message else '')[:300]}{line}"


def _load(job: dict) -> tuple[ModuleType, ModuleType]:
    spec = load_module(job["spec_path"])
    apply_sizes(spec, job.get("sizes", {}))
    if not hasattr(spec, "get_init_inputs"):
        spec.get_init_inputs = lambda: []
    return spec, _import_candidate(job["candidate_path"])


def _models(spec: ModuleType, cand: ModuleType, seed: int, device: str) -> tuple[Any, Any]:
    """Both models built after the same seed; the reference's weights copied when names match."""
    init = spec.get_init_inputs()
    torch.manual_seed(seed)
    ref = spec.Model(*init)
    torch.manual_seed(seed)
    try:
        new = cand.ModelNew(*init)
    except BaseException as exc:
        raise Rejected(f"init-error: ModelNew({len(init)} init args) raised {_describe(exc)}") from None
    ref_state, new_state = ref.state_dict(), new.state_dict()
    if ref_state.keys() == new_state.keys() and all(ref_state[k].shape == new_state[k].shape for k in ref_state):
        new.load_state_dict(ref_state)
    return ref.to(device).eval(), new.to(device).eval()


def _inputs(spec: ModuleType, job: dict, seed: int) -> list[list]:
    torch.manual_seed(seed)
    lists = input_lists(spec, Path(job["spec_path"]))
    return [[x.to(job.get("device", "cpu")) if isinstance(x, torch.Tensor) else x for x in xs] for xs in lists]


def _clone(inputs: list) -> list:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def build_job(job: dict) -> dict:
    """Record the launches of one forward (kernels not run) and compile each for the GPU target."""
    try:
        spec, cand = _load(job)
        ref, new = _models(spec, cand, job["seed"], "cpu")
    except Rejected as exc:
        return {"kernels": [], "reasons": [str(exc)], "launches": {}}
    note = None
    with torch.no_grad(), guards.LaunchLog(noop=True) as log:
        try:
            new(*_clone(_inputs(spec, job, job["seed"])[0]))
        except Exception as exc:  # outputs are garbage with kernels skipped; the run job judges forward
            note = f"forward stopped after {len(log.launches)} launches: {_describe(exc)}"
    kernels, reasons, notes = aot.compile_launches(log.launches, job.get("arch", 90))
    notes = ([note] if note else []) + notes
    return {"kernels": kernels, "reasons": reasons, "launches": log.counts(), "note": "; ".join(notes) or None}


def _equal_nan(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    same = a == b
    if a.is_floating_point():
        same |= torch.isnan(a) & torch.isnan(b)
    return bool(same.all())


class RunContext:
    """State carried across the trials of one run job."""

    def __init__(self, job: dict, spec: ModuleType, ref: Any, new: Any) -> None:
        self.job, self.spec, self.ref, self.new = job, spec, ref, new
        self.reasons: dict[str, str] = {}
        self.history: dict[int, list[tuple[list, list]]] = {}
        self.variants: dict[int, dict] = {}
        self.launches: dict[str, int] = {}
        self.param_storages = guards.storages(list(new.parameters()) + list(new.buffers()))
        names = list(inspect.signature(spec.Model.forward).parameters)[1:]
        self.mutates = {names.index(n) for n in job.get("mutates", []) if n in names}

    def fail(self, reason: str) -> None:
        code = reason.split(":", 1)[0]
        if code not in self.reasons and len(self.reasons) < MAX_REASONS:
            self.reasons[code] = reason


def _call_candidate(ctx: RunContext, inputs: list, noop: bool = False) -> tuple[Any, guards.ForwardGuard, list]:
    guard = guards.ForwardGuard()
    threads = guards.live_threads()
    with torch.no_grad(), guards.LaunchLog(noop=noop, guard=guard) as log, guard:
        out = ctx.new(*inputs)
    new_threads = guards.live_threads() - threads
    if new_threads:
        ctx.fail(f"threads: forward left {len(new_threads)} thread(s) running")
    if children := guards.child_processes():
        ctx.fail(f"subprocess: forward left child process(es) {children[:5]}")
    return out, guard, log.launches


def _check_forward(ctx: RunContext, guard: guards.ForwardGuard, launches: list) -> None:
    if guard.compute:
        ops = ", ".join(f"{k} x{v}" for k, v in guard.compute.most_common(5))
        ctx.fail(f"torch-compute: forward computes with PyTorch ({ops}); only allocation, views and "
                 "kernel launches are allowed")
    if guard.downcasts:
        ctx.fail(f"low-precision: forward casts {guard.downcasts[0]}")
    if not launches:
        ctx.fail("no-launch: forward launched no Triton kernel")
    for launch in launches:
        ctx.launches[launch.name] = ctx.launches.get(launch.name, 0) + 1


def _check_memory(ctx: RunContext, out: Any, ref_out: Any, cand_in: list, pristine: list, ref_in: list) -> None:
    outs = guards.storages(flatten_outputs(out))
    if outs & guards.storages(cand_in):
        ctx.fail("aliasing: an output shares memory with an input")
    elif outs & (guards.storages(flatten_outputs(ref_out)) | ctx.param_storages):
        ctx.fail("aliasing: an output shares memory with the reference's output or a parameter")
    for i, (after, before) in enumerate(zip(cand_in, pristine)):
        if not isinstance(after, torch.Tensor):
            continue
        expected = ref_in[i] if i in ctx.mutates else before
        if i in ctx.mutates and compare_outputs(expected, after, ctx.job.get("atol"), ctx.job.get("rtol"))[0].problem:
            ctx.fail(f"mismatch: in-place argument {i} differs from the reference after the call")
        elif i not in ctx.mutates and not _equal_nan(after, before):
            ctx.fail(f"input-mutation: input {i} was modified by forward (declare it in OPFORGE['mutates'])")


def _check_history(ctx: RunContext, variant: int, out: list, ref: list) -> None:
    for old_out, old_ref in ctx.history.get(variant, []):
        for o, r, oo, orf in zip(out, ref, old_out, old_ref):
            if not (isinstance(o, torch.Tensor) and isinstance(oo, torch.Tensor)) or o.numel() == 0:
                continue
            if guards.storages(o) & guards.storages(oo):
                ctx.fail("cached-output: returned the same buffer as an earlier call")
            elif _equal_nan(o, oo) and not _equal_nan(r, orf):
                ctx.fail("cached-output: returned an earlier call's result for different inputs")
    ctx.history.setdefault(variant, []).append((out, ref))


def _check_values(ctx: RunContext, variant: int, out: list, ref: list) -> bool:
    reports = compare_outputs(ref, out, ctx.job.get("atol"), ctx.job.get("rtol"))
    entry = ctx.variants.setdefault(variant, {
        "index": variant, "shapes": [list(r.shape) for r in ref if isinstance(r, torch.Tensor)],
        "max_abs_err": 0.0, "max_rel_err": 0.0, "atol": None, "rtol": None, "trials": 0, "passed": True})
    entry["trials"] += 1
    ok = True
    for rep, o, r in zip(reports, out, ref):
        entry["max_abs_err"] = max(entry["max_abs_err"], rep.max_abs_err)
        entry["max_rel_err"] = max(entry["max_rel_err"], rep.max_rel_err)
        entry["atol"], entry["rtol"] = rep.atol, rep.rtol
        if rep.problem:
            ok = entry["passed"] = False
            ctx.fail(f"mismatch: variant {variant}: {rep.problem}")
            _explain_mismatch(ctx, o, r)
    return ok


def _explain_mismatch(ctx: RunContext, out: Any, ref: Any) -> None:
    if not (isinstance(out, torch.Tensor) and isinstance(ref, torch.Tensor)) or out.shape != ref.shape:
        return
    unwritten = guards.count_sentinel(out)
    if unwritten:
        ctx.fail(f"partial-output: {unwritten} of {out.numel()} output elements were never written")
    flat_out, flat_ref = out.detach().flatten(), ref.detach().flatten()
    if flat_out.numel() > 1 and _equal_nan(flat_out, flat_out[:1].expand_as(flat_out)) and not _equal_nan(
            flat_ref, flat_ref[:1].expand_as(flat_ref)):
        ctx.fail(f"constant-output: every output element is {flat_out[0].item():g} but the reference varies")


def _trial(ctx: RunContext, seed: int) -> bool:
    ok = True
    for variant, inputs in enumerate(_inputs(ctx.spec, ctx.job, seed)):
        cand_in, ref_in = _clone(inputs), _clone(inputs)
        try:
            out, guard, launches = _call_candidate(ctx, cand_in)
        except BaseException as exc:
            ctx.fail(f"{_failure_code(exc, 'runtime-error')}: variant {variant}: forward raised {_describe(exc)}")
            return False
        with torch.no_grad():
            ref_out = ctx.ref(*ref_in)
        _check_forward(ctx, guard, launches)
        _check_memory(ctx, out, ref_out, cand_in, inputs, ref_in)
        out_list, ref_list = flatten_outputs(out), flatten_outputs(ref_out)
        ok &= _check_values(ctx, variant, out_list, ref_list)
        _check_history(ctx, variant, out_list, ref_list)
    return ok and not ctx.reasons


def _check_noop(ctx: RunContext, seed: int) -> None:
    """With every kernel launch skipped, the output must no longer match the reference."""
    inputs = _inputs(ctx.spec, ctx.job, seed)[0]
    try:
        out, _guard, launches = _call_candidate(ctx, _clone(inputs), noop=True)
    except Exception:
        return  # forward needed its kernels' results: it depends on them
    if not launches:
        return
    with torch.no_grad():
        ref_out = ctx.ref(*_clone(inputs))
    if not any(r.problem for r in compare_outputs(ref_out, out, ctx.job.get("atol"), ctx.job.get("rtol"))):
        ctx.fail("kernel-independent: the output still matches with every Triton kernel replaced by a no-op")


def take_snapshot() -> guards.ModuleSnapshot:
    return guards.ModuleSnapshot()


def run_job(job: dict, snapshot: guards.ModuleSnapshot | None = None) -> dict:
    started = time.perf_counter()
    snapshot = snapshot or guards.ModuleSnapshot()
    try:
        spec, cand = _load(job)
        ref, new = _models(spec, cand, job["seed"], job.get("device", "cpu"))
    except Rejected as exc:
        return _result(job, None, [str(exc)], started)
    ctx = RunContext(job, spec, ref, new)
    _check_patches(ctx, snapshot)
    for trial in range(job.get("trials", 5)):
        # a second trial even after a failure: caching cheats only show on a repeated call
        if not _trial(ctx, job["seed"] + trial) and (trial >= 1 or {"runtime-error", "oom"} & set(ctx.reasons)):
            break
    if not ctx.reasons:  # last, so a cache filled by the probe cannot shape the trials
        _check_noop(ctx, job["seed"] + 7919)
    _check_patches(ctx, snapshot)
    timings = None
    if not ctx.reasons and job.get("device") == "cuda" and job.get("profile", True):
        from harness.profile import profile_models
        timings = profile_models(new, ref, _inputs(spec, job, job["seed"])[0])
    return _result(job, ctx, list(ctx.reasons.values()), started, timings)


def _check_patches(ctx: RunContext, snapshot: guards.ModuleSnapshot) -> None:
    if changed := snapshot.changes():
        ctx.fail(f"patched: the candidate replaced {', '.join(changed[:4])}")


def _result(job: dict, ctx: RunContext | None, reasons: list[str], started: float, timings=None) -> dict:
    codes = {r.split(":", 1)[0] for r in reasons}
    order = ["load", "run", "compare", "anticheat"]
    failed = [STAGE_OF.get(c, "run") for c in codes]
    stage = min(failed, key=order.index) if failed else ("profile" if timings else "anticheat")
    ran = ctx is not None
    return {
        "correct": not reasons,
        "stage": stage,
        "reasons": reasons,
        "variants": sorted(ctx.variants.values(), key=lambda v: v["index"]) if ran else [],
        "launches": ctx.launches if ran else {},
        "anticheat": {c: ("fail" if c in codes else "pass") if ran else "not run" for c in ANTICHEAT},
        "timings": timings,
        "run_s": round(time.perf_counter() - started, 3),
    }
