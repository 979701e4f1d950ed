"""The candidate's side of a verification: what runs in the sandboxed process that imports it.

This process holds nothing worth forging: no reference model, no expected outputs, no comparison
and no verdict. It receives the init arguments, the reference's weights and every input set as
data (`inputs.pt`, written by the judge), runs the judge's call plan on the candidate under the
guards, and hands back the outputs as copies (`outputs.pt`) with a report of what each call did
(launches, PyTorch compute, threads, global state...). The judge (harness/judge.py, another
process) compares and decides; whatever this process says is evidence against the candidate,
never a verdict for it.

- `build_job`: record the launches of one forward (kernels not run) and compile each ahead of time.
- `run_plan`: the call plan (trials, stress cases, repeated and fresh calls, the no-op probe) and,
  on a GPU, timing with sampled and fresh calls kept for the judge to check.
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

from opforge.harness import callstate, early, guards
from opforge.harness.mode import set_mode

MAX_ERRORS = 12


class Rejected(Exception):
    """The candidate cannot be run at all (import or construction failed)."""


MEMORY_ERRORS = ("can't allocate memory", "out of memory", "cannot allocate memory")


def failure_code(exc: BaseException, default: str) -> str:
    """`oom` for allocation failures (the sandbox's memory limit), else the check's own code."""
    text = str(exc).lower()
    return "oom" if isinstance(exc, MemoryError) or any(m in text for m in MEMORY_ERRORS) else default


def describe(exc: BaseException) -> str:
    """`Type: message (candidate line N)` — the line that matters to whoever wrote the kernel."""
    line = ""
    for frame in reversed(inspect.getinnerframes(exc.__traceback__) if exc.__traceback__ else []):
        if frame.filename in guards.ACCUSED.files:
            line = f" (candidate line {frame.lineno})"
            break
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {(message[-1] if message else '')[:300]}{line}"


class Trial:
    """Everything the candidate does runs inside `with Trial():` — the guards' notion of 'its code'."""

    def __enter__(self) -> "Trial":
        guards.ACCUSED.active = True
        return self

    def __exit__(self, *exc) -> None:
        guards.ACCUSED.active = False


def import_candidate(path: str) -> ModuleType:
    """Import under a private name; anything it raises (SystemExit included) is data."""
    guards.ACCUSED.files.add(str(Path(path)))
    sys.modules.pop("opforge_candidate", None)
    spec = importlib.util.spec_from_file_location("opforge_candidate", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["opforge_candidate"] = module
    try:
        with Trial():
            spec.loader.exec_module(module)
    except BaseException as exc:
        code = failure_code(exc, "load-error")
        raise Rejected(f"{code}: importing the candidate raised {describe(exc)}") from None
    if not isinstance(getattr(module, "ModelNew", None), type):
        raise Rejected("load-error: the candidate defines no ModelNew class")
    return module


def build_model(cand: ModuleType, entry: dict, device: str) -> Any:
    """ModelNew built with the reference's init args after the same seed; its weights copied from
    the reference's when names and shapes match (the judge sent the reference's state_dict)."""
    torch.manual_seed(entry["seed"])
    try:
        with Trial():
            new = cand.ModelNew(*entry["init"])
    except BaseException as exc:
        raise Rejected(f"init-error: ModelNew({len(entry['init'])} init args) raised {describe(exc)}") from None
    if _holds_state(new, entry):
        new.load_state_dict(entry["state"])
    return set_mode(new.to(device), entry["mode"])


def _holds_state(model: Any, entry: dict) -> bool:
    ref_state, new_state = entry["state"], model.state_dict()
    return ref_state.keys() == new_state.keys() and all(ref_state[k].shape == new_state[k].shape for k in ref_state)


def _load(job: dict) -> tuple[dict, ModuleType]:
    from opforge.backends import DEFAULT, plugin

    data = torch.load(job["inputs_path"], weights_only=True, map_location="cpu")
    if problems := plugin(job.get("backend", DEFAULT)).before_import(job):
        raise Rejected(problems[0])  # the project the candidate imports did not build
    return data, import_candidate(job["candidate_path"])


def _to(value: Any, device: str) -> Any:
    return value.to(device) if isinstance(value, torch.Tensor) else value


def _clone(inputs: list) -> list:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def _recorded_calls(data: dict, every_case: bool) -> list[tuple[int, int]]:
    """(model, case) pairs the build records: the main case, or, for a backend whose build must
    see every specialization the run will launch, each distinct (model, case) of the plan: a launch
    may depend on the inputs' values as well as their layout (a constexpr read from them), and a
    recorded forward with its launches no-op'd costs milliseconds (compiles are deduplicated)."""
    if not every_case:
        return [(0, 0)]
    calls = [(step.get("model", 0), step["case"]) for step in data["plan"] if not step.get("noop")]
    return list(dict.fromkeys(calls)) or [(0, 0)]


def build_job(job: dict) -> dict:
    """Record the launches of one forward (kernels not run) and compile each for the GPU target."""
    from opforge.backends import DEFAULT, plugin

    backend = plugin(job.get("backend", DEFAULT))
    # A backend whose build judges the kernel in this process after the candidate ran (Ascend's front
    # end) has the watched modules compared after the recorded forwards.
    snapshot = guards.ModuleSnapshot() if getattr(backend, "watch_build", False) else None
    try:
        data, cand = _load(job)
        models = {0: build_model(cand, data["models"][0], "cpu")}
        calls = _recorded_calls(data, getattr(backend, "build_every_case", False))
        for index, _ in calls:
            if index not in models:
                models[index] = build_model(cand, data["models"][index], "cpu")
    except Rejected as exc:
        return {"kernels": [], "reasons": [str(exc)], "launches": {}}
    note = None
    with torch.no_grad(), guards.LaunchLog(noop=True) as log, Trial():
        for index, case in calls:
            try:
                models[index](*_clone(data["cases"][case]))
            except BaseException as exc:  # outputs are garbage with kernels skipped; the run job judges forward
                note = note or f"forward stopped after {len(log.launches)} launches: {describe(exc)}"
    if snapshot is not None and (patched := snapshot.changes()):
        return {"kernels": [], "reasons": [f"patched: the candidate replaced {', '.join(patched[:4])}"],
                "launches": log.counts()}
    began = time.perf_counter()
    kernels, reasons, notes, extra = backend.build(log.launches, job)
    notes = ([note] if note else []) + notes
    return {"kernels": kernels, "reasons": reasons, "launches": log.counts(), "note": "; ".join(notes) or None,
            "steps": (extra or {}).get("steps") or {}, "warnings": (extra or {}).get("warnings") or [],
            "launch_keys": (extra or {}).get("launch_keys") or [], "seconds": round(time.perf_counter() - began, 3)}


def _equal_nan(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    same = a == b
    if a.is_floating_point():
        same |= torch.isnan(a) & torch.isnan(b)
    return bool(same.all())


def flatten(value: Any) -> list:
    """A model may return a tensor, a tuple/list of tensors, a Python number, or None (an in-place op)."""
    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in flatten(item)]
    return [value]


class Session:
    """The candidate's models and the evidence gathered across the calls of one run job."""

    def __init__(self, job: dict, data: dict, cand: ModuleType, state: dict) -> None:
        self.job, self.data, self.device = job, data, job.get("device", "cpu")
        self.models = [build_model(cand, entry, self.device) for entry in data["models"]]
        # does each model hold the reference's parameters (same names and shapes)?
        self.fits = [_holds_state(m, entry) for m, entry in zip(self.models, data["models"])]
        self.params = [guards.storages(list(m.parameters()) + list(m.buffers())) for m in self.models]
        self.kept: list[list] = []  # outputs of earlier calls, to catch a buffer handed out twice
        self.cand, self.repeat_state = cand, None  # (plan index, callstate.state_map) after the last repeated call
        self.state = state  # taken before the candidate was imported
        from opforge.backends import DEFAULT, plugin

        self.backend = plugin(job.get("backend", DEFAULT))
        self.backend.start_run(data)  # the seed of the CPU run's program orders (backends/triton/memory.py)

    def call(self, index: int, step: dict) -> tuple[dict, list | None]:
        """One call of the plan: (report, outputs as CPU copies), never raises for the candidate."""
        model = step.get("model", 0)
        if model and self.fits[0] and not self.fits[model]:
            return {"call": index, "case": step["case"], "skipped": (
                "ModelNew built with these constructor arguments does not hold the reference's parameters "
                "(names or shapes differ, where at the sizes used they matched): it is built for the sizes "
                "used, so it is verified at those")}, None
        case = self.case_inputs(step["case"])
        inputs, pristine = _clone(case), _clone(case)
        guard = guards.ForwardGuard()
        report: dict = {"call": index, "case": step["case"]}
        self.backend.call_findings()  # whatever an earlier call or timing left is not this call's
        began = time.perf_counter()
        try:
            with torch.no_grad(), guards.LaunchLog(noop=step.get("noop", False)) as log, guard, Trial():
                out = self.models[step.get("model", 0)](*inputs)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt from the candidate are data too
            report["error"] = f"{failure_code(exc, 'runtime-error')}: forward raised {describe(exc)}"
            report["events"] = guards.ACCUSED.take_events()
            report.update(self.backend.call_findings())
            return report, None
        report.update(self.backend.call_findings())  # even where forward caught what a launch raised
        report["seconds"] = round(time.perf_counter() - began, 4)
        report["launches"] = log.counts()
        report["compute"] = dict(guard.compute.most_common(5))
        report["downcasts"] = guard.downcasts[:3]
        report["host_reads"] = guard.host_reads
        report["input_elements"] = sum(x.numel() for x in case if isinstance(x, torch.Tensor))
        report["events"] = guards.ACCUSED.take_events()
        outs = flatten(out)
        report["output_types"] = [type(o).__name__ for o in outs if type(o) not in (torch.Tensor, int, float, bool)]
        if report["output_types"]:
            return report, None
        report.update(self._memory(step, outs, inputs, pristine))
        self.kept.append([o for o in outs if isinstance(o, torch.Tensor)])
        report.update(self._call_state(index, step))
        mutated = [inputs[i] for i in self.data.get("mutates", []) if i < len(inputs)]
        return report, [_copy(o) for o in outs + mutated]

    def _call_state(self, index: int, step: dict) -> dict:
        """Two consecutive repeated calls (the same inputs) must leave what the candidate can reach
        as they found it, or the call count could choose its result (harness/callstate.py)."""
        if not step.get("repeat"):
            return {}
        now = callstate.state_map(self.cand, self.models)
        before, self.repeat_state = self.repeat_state, (index, now)
        what = callstate.changed(before[1], now) if before and before[0] == index - 1 else None
        return {"stateful": what} if what else {}

    def _memory(self, step: dict, outs: list, inputs: list, pristine: list) -> dict:
        found: dict = {}
        # an output may be the in-place argument the reference itself returns at that position
        allowed = {(k, i) for k, i in self.data.get("aliases", [])}
        out_storages = guards.storages([o for o in outs if isinstance(o, torch.Tensor)])
        returned = guards.storages([o for k, o in enumerate(outs) if isinstance(o, torch.Tensor)
                                    and not any((k, i) in allowed and guards.storages([o]) == guards.storages([inputs[i]])
                                                for i in range(len(inputs)))])
        if returned & guards.storages(inputs):
            found["aliasing"] = "an output shares memory with an input"
        elif out_storages & self.params[step.get("model", 0)]:
            found["aliasing"] = "an output shares memory with a parameter"
        for earlier, kept in enumerate(self.kept):
            if out_storages & guards.storages(kept):
                found["same_buffer"] = earlier
                break
        mutates = set(self.data.get("mutates", []))
        found["mutated"] = [i for i, (after, before) in enumerate(zip(inputs, pristine))
                            if isinstance(after, torch.Tensor) and i not in mutates and not _equal_nan(after, before)]
        return found

    # -- what profile.bench_candidate times with (it imports nothing of the candidate's side) ------

    def case_inputs(self, case: int) -> list:
        """A case's inputs on the session's device."""
        return [_to(x, self.device) for x in self.data["cases"][case]]

    @staticmethod
    def copy_inputs(inputs: list) -> list:
        """Copies of `inputs` for one call (the candidate may write into them)."""
        return _clone(inputs)

    def timed_call(self, args: list) -> tuple[Any, int]:
        """The first model on `args` under the guards: (its output, how many kernels it launched)."""
        with guards.LaunchLog() as log, Trial():
            out = self.models[0](*args)
        return out, len(log.launches)

    @staticmethod
    def cpu_copies(out: Any) -> list:
        """A call's outputs as plain CPU copies, for the judge."""
        return [_copy(o) for o in flatten(out)]

    def drift(self, snapshot: guards.ModuleSnapshot) -> dict:
        """Global state and module attributes changed since the models were built."""
        return {"global_state": guards.state_changes(self.state, guards.global_state()),
                "patched": snapshot.changes()[:6]}


def _copy(value: Any) -> Any:
    """A plain CPU tensor with its own storage (no subclass, no view into the candidate's memory)."""
    if isinstance(value, torch.Tensor) and value.dtype == torch.bool:  # bytes as they are: a copy turns
        return _copy(value.detach().view(torch.uint8)).view(torch.bool)  # any byte but 0 into True (1)
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True).contiguous()
    return value


def run_plan(job: dict, snapshot: guards.ModuleSnapshot) -> dict:
    started = time.perf_counter()
    state = guards.global_state()
    try:
        data, cand = _load(job)
        import_drift = snapshot.changes()
        session = Session(job, data, cand, state)
    except Rejected as exc:
        return {"rejected": str(exc), "calls": [], "run_s": round(time.perf_counter() - started, 3)}
    calls, outputs, errors, stopped = [], [], 0, False
    after = set(job.get("checkpoints") or []) if job.get("early_path") else set()  # harness/early.py
    for index, step in enumerate(data["plan"]):
        if after and index > min(after) and early.told_to_stop(job):
            stopped = True  # by the judge: no timing either
            break
        report, outs = session.call(index, step)
        calls.append(report)
        outputs.append(outs)
        errors += "error" in report
        if errors and (step.get("stop_on_error", True) or errors >= MAX_ERRORS):
            break
        if index in after:
            early.leave(job, calls, outputs)
            if index == min(after) or job.get("replayable"):  # replayable: where it stops is the judge's, no race
                early.await_answer(job, len(calls))
    if after:
        early.finish(job)
    bench = None
    if data.get("bench") and not errors and not stopped:
        from opforge.harness.profile import bench_candidate
        bench, bench_outputs = bench_candidate(session, data["bench"])
        outputs += bench_outputs
    torch.save({"outputs": outputs}, job["outputs_path"])
    drift = session.drift(snapshot)
    drift["patched"] = (import_drift + drift["patched"])[:6]
    return {"calls": calls, "bench": bench, **drift, "run_s": round(time.perf_counter() - started, 3)}
