"""Judging what came back from the candidate's process: its per-call reports and its outputs,
against the reference's outputs the judge computed itself. Reasons are `code: detail`;
`judge.CHECK_OF` maps each code to the check of the numerics step that failed (harness/ladder.py).

The candidate's own words (exception texts, its exit) only ever appear quoted inside a reason
whose code the judge chose; nothing it reports can make a verdict correct.
"""
from __future__ import annotations

import hashlib
import time

import torch

from opforge.harness import selection
from opforge.harness.compare import compare_outputs
from opforge.harness.judge import ANTICHEAT, CHECK_OF, MAX_REASONS, Case, Material, unwritten

# A kernel may read a few scalars (a length, a flag) into Python; reading a tenth of its inputs is
# computing the op in Python. 16: a paged-attention launcher reading per-batch lengths stays under it.
HOST_READS_FREE = 16

EVENT_CODES = ("below-dispatcher", "threads", "subprocess",
               "runtime-error")  # an unbuilt launch refused (launch_keys.py), even where forward caught it


class Findings:
    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}
        self.variants: dict[int, dict] = {}
        self.stress: dict[str, dict] = {}
        self.launches: dict[str, int] = {}
        self.compared_trials = 0
        self.sources: dict[int, dict] = {}  # per case, its index outputs' sources (harness/selection.py)

    def fail(self, reason: str) -> None:
        code = reason.split(":", 1)[0]
        if code not in self.reasons and len(self.reasons) < MAX_REASONS:
            self.reasons[code] = reason


def _forward(f: Findings, report: dict, noop: bool, label: str) -> None:
    if report.get("compute"):
        ops = ", ".join(f"{k} x{v}" for k, v in report["compute"].items())
        f.fail(f"torch-compute: forward computes with PyTorch ({ops}); only allocation, views and "
               "kernel launches are allowed")
    if report.get("downcasts"):
        f.fail(f"low-precision: forward casts {report['downcasts'][0]}")
    reads = report.get("host_reads") or 0
    if reads > HOST_READS_FREE and reads * 10 >= (report.get("input_elements") or 0):
        f.fail(f"host-compute: forward read {reads} tensor elements into Python (item(), float(), int()) "
               f"for {report.get('input_elements')} input elements; the op must be computed by kernels")
    _events(f, report)
    if report.get("output_types"):
        f.fail(f"output-type: {label}: forward returned {', '.join(report['output_types'][:3])}, "
               "not plain torch.Tensor outputs")
    if not noop and not report.get("launches"):
        f.fail(f"no-launch: {label}: forward launched no kernel (Triton or CUDA)")
    if report.get("aliasing"):
        f.fail(f"aliasing: {report['aliasing']}")
    if report.get("mutated"):
        f.fail(f"input-mutation: input {report['mutated'][0]} was modified by forward "
               "(declare it in OPFORGE['mutates'])")
    if report.get("stateful"):
        f.fail(f"stateful: {label}: two repeated calls on the same inputs changed what the candidate keeps "
               f"({str(report['stateful'])[:200]}); a result must not depend on how many calls came before")
    if report.get("same_buffer") is not None:
        f.fail("cached-output: returned the same buffer as an earlier call")
    for name, count in (report.get("launches") or {}).items():
        if not noop:
            f.launches[name] = f.launches.get(name, 0) + count


def _events(f: Findings, report: dict) -> None:
    for event in report.get("events") or []:
        if str(event).split(":", 1)[0] in EVENT_CODES:
            f.fail(str(event)[:300])


def _values(f: Findings, case: Case, outs: list, atol, rtol, n_mutates: int, repeat: bool = False,
            reference=None) -> bool:
    expected = case.expected
    n_out = len(expected) - n_mutates
    if len(outs) != len(expected):
        f.fail(f"mismatch: {case.label}: returned {len(outs) - n_mutates} outputs, reference returns {n_out}")
        return False
    # the judge measures no float64 error for in-place arguments; compare_outputs pads the rest
    reports = compare_outputs(expected[:n_out], outs[:n_out], atol, rtol, (case.noise or [])[:n_out])
    ties = _by_selected_values(f, case, reports, outs, reference)
    for i, (e, o) in enumerate(zip(expected[n_out:], outs[n_out:])):
        rep = compare_outputs(e, o, atol, rtol)[0]
        if rep.problem:
            rep.problem = f"in-place argument {i} differs from the reference after the call: {rep.problem}"
        reports.append(rep)
    entry = _entry(f, case, expected[:n_out])
    entry["trials"] += not repeat  # a variant's trials are its seeded ones; repeated calls are extra
    if ties:
        entry["ties"] = max(entry.get("ties", 0), ties)
        entry["note"] = (f"{entry['ties']} indices differ from the reference's where the values they select tie "
                         "(compared by the values they select)")
    ok = True
    for rep in reports:
        entry["max_abs_err"] = max(entry["max_abs_err"], rep.max_abs_err)
        entry["max_rel_err"] = max(entry["max_rel_err"], rep.max_rel_err)
        entry["atol"], entry["rtol"] = rep.atol, rep.rtol
        if rep.noise:  # the reference's own error against float64, of which the atol allowed NOISE_FACTOR times
            entry["reference_error"] = max(entry.get("reference_error", 0.0), rep.noise)
        if rep.problem:
            ok = entry["passed"] = False
            entry["status"] = "failed"
            where = f"variant {case.variant}" if case.kind == "trial" else f"{case.kind} case {case.label}"
            f.fail(f"mismatch: {where}: {rep.problem}")
    if not ok:
        _explain(f, outs[:n_out], expected[:n_out])
    return ok


def _by_selected_values(f: Findings, case: Case, reports: list, outs: list, reference) -> int:
    """Integer outputs that differ where they are an index op's indices (harness/selection.py) are
    compared again by the values they select; returns how many indices differ on ties."""
    mismatched = [r for r in reports if r.problem and r.max_abs_err and r.dtype.startswith(("int", "uint"))]
    if not mismatched or reference is None:
        return 0
    key = id(case)
    if key not in f.sources:
        f.sources[key] = selection.index_sources(reference, case.inputs, case.expected)
    ties = 0
    for rep in mismatched:
        source = f.sources[key].get(rep.index)
        if source is not None:
            rep.problem, differ = selection.compare_selected(rep.index, case.expected[rep.index], outs[rep.index], source)
            ties += differ
    return ties


def _entry(f: Findings, case: Case, expected: list) -> dict:
    new = {"shapes": [list(r.shape) for r in expected if isinstance(r, torch.Tensor)], "max_abs_err": 0.0,
           "max_rel_err": 0.0, "atol": None, "rtol": None, "trials": 0, "passed": True}
    if case.kind == "trial":
        return f.variants.setdefault(case.variant, {"index": case.variant, **new})
    return f.stress.setdefault(case.label, {"case": case.label, "kind": case.kind, "status": "passed", **new})


def _explain(f: Findings, outs: list, expected: list) -> None:
    count = unwritten(outs)
    if count:
        total = sum(o.numel() for o in outs if isinstance(o, torch.Tensor))
        f.fail(f"partial-output: {count} of {total} output elements were never written")
    for out, ref in zip(outs, expected):
        if not (isinstance(out, torch.Tensor) and isinstance(ref, torch.Tensor)) or out.shape != ref.shape:
            continue
        flat_out, flat_ref = out.flatten(), ref.detach().cpu().flatten()
        if flat_out.numel() > 1 and _constant(flat_out) and not _constant(flat_ref):
            f.fail(f"constant-output: every output element is {flat_out[0].item():g} but the reference varies")


def _constant(t: torch.Tensor) -> bool:
    t = t.view(torch.uint8) if t.dtype == torch.bool else t  # an unwritten element's byte is not True's
    first = t[:1].expand_as(t)
    return bool(((t == first) | (torch.isnan(t) & torch.isnan(first))).all()) if t.is_floating_point() else bool(
        (t == first).all())


class History:
    """Outputs already seen: the same values again for inputs whose reference outputs differ
    (beyond tolerance) is a replay of an earlier result."""

    def __init__(self, atol, rtol) -> None:
        self.atol, self.rtol = atol, rtol
        self.seen: dict[str, list] = {}  # output fingerprint -> the expected outputs it first answered

    def check(self, f: Findings, outs: list, case: Case) -> None:
        got = fingerprint(outs)
        earlier = self.seen.setdefault(got, case.expected)
        if earlier is case.expected or len(earlier) != len(case.expected):
            return
        if any(r.problem for r in compare_outputs(earlier, case.expected, self.atol, self.rtol)):
            f.fail(f"cached-output: {case.label}: returned an earlier call's result for different inputs")


def judge_calls(material: Material, payload: dict, outputs: list | None, atol, rtol) -> Findings:
    f = Findings()
    if payload.get("rejected"):
        f.fail(payload["rejected"])
        return f
    calls = payload.get("calls")
    if not isinstance(calls, list) or outputs is None or len(outputs) < len(calls):
        f.fail("runtime-error: the candidate's process returned no usable outputs")
        return f
    if len(calls) < len(material.plan) and not any("error" in c for c in calls if isinstance(c, dict)):
        f.fail(f"runtime-error: the candidate's process answered {len(calls)} of the {len(material.plan)} "
               "calls it was asked (no usable outputs for the rest)")
    history, noop_outs, repeats = History(atol, rtol), [], {}
    for report, outs in zip(calls, outputs):
        step = material.plan[report["call"]] if 0 <= report.get("call", -1) < len(material.plan) else None
        if step is None or step["case"] != report.get("case"):
            f.fail("runtime-error: the candidate's process answered a call it was not asked")
            return f
        case = material.cases[step["case"]]
        if report.get("skipped") and step.get("model", 0):  # only a model built again at other sizes
            f.stress[case.label] = {"case": case.label, "status": "skipped", "reason": str(report["skipped"])[:300]}
            continue
        if _memory(f, report, case.label) and "error" in report:
            continue  # what the launch did is why forward raised
        if "error" in report:
            _events(f, report)  # a refused thread or process start is why forward raised
            code, _, rest = str(report["error"]).partition(":")
            code = code if code in ("runtime-error", "oom") else "runtime-error"
            f.fail(f"{code}: {case.label}:{rest[:400]}")
            continue
        _forward(f, report, step.get("noop", False), case.label)
        if outs is None:
            continue
        if step.get("noop"):
            noop_outs.append((case, outs))
            continue
        f.compared_trials += case.kind == "trial"
        _values(f, case, outs, atol, rtol, len(material.mutates), repeat=bool(step.get("repeat")),
                reference=material.refs[case.model] if case.model < len(material.refs) else None)
        if step.get("repeat"):
            _same_in_any_order(f, repeats.setdefault(step["case"], (report, outs)), report, outs, case, atol, rtol)
        history.check(f, outs, case)
    _noop(f, noop_outs, atol, rtol, len(material.mutates))
    _drift(f, payload)
    return f


# the codes a backend's call_findings may report: the CPU run's memory model, the launch-resource and state
# checks, and the AscendC emulator's (backends/ascendc/emulator/errors.py)
MEMORY_CODES = ("out-of-bounds", "race", "out-of-resources", "stateful", "deadlock", "use-after-free", "misaligned",
                "ub-overflow", "step-limit", "host-error", "bad-argument", "unsupported", "crash")


def _memory(f: Findings, report: dict, label: str) -> bool:
    """The CPU run's memory model (backends/triton/memory.py): out-of-bounds accesses and races
    between programs, launches a GPU would refuse (backends/cuda/emulator/limits.py) and CUDA calls
    whose result could depend on the call count (emulator/state.py: stateful), reported even where
    forward caught what the launch raised."""
    found = [str(r) for r in report.get("memory") or []
             if str(r).split(":", 1)[0] in MEMORY_CODES]
    for reason in found:
        code, _, rest = reason.partition(":")
        f.fail(f"{code}: {label}:{rest[:500]}")
    return bool(found)


def _same_in_any_order(f: Findings, first: tuple, report: dict, outs: list, case: Case, atol, rtol) -> None:
    """Repeated calls on the same inputs ran their programs in other orders (grid, reverse, a
    seeded shuffle): a correct kernel gives the same bits, or, where it adds floats atomically, the
    same values within tolerance."""
    first_report, first_outs = first
    if first_outs is outs or len(first_outs) != len(outs) or not (report.get("orders") or first_report.get("orders")):
        return  # the same call, or a backend whose CPU run does not reorder its programs
    atomics = report.get("float_atomics") or first_report.get("float_atomics")
    for i, (a, b) in enumerate(zip(first_outs, outs)):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape:
            continue
        if atomics:
            rep = compare_outputs(a, b, atol, rtol)[0]
            differs = rep.problem
        else:
            same = (a == b) | (torch.isnan(a) & torch.isnan(b)) if a.is_floating_point() or a.is_complex() else a == b
            differs = None if bool(same.all()) else \
                f"output {i}: {int((~same).sum())} of {a.numel()} elements differ bitwise"
        if differs:
            orders = sorted({*(first_report.get("orders") or []), *(report.get("orders") or [])})
            f.fail(f"order-dependent: {case.label}: two calls on the same inputs differ ({differs}) with the "
                   f"programs run in {', '.join(orders) or 'other'} order; on hardware "
                   "programs run concurrently, so the result must not depend on their order")
            return


def _noop(f: Findings, noop_outs: list, atol, rtol, n_mutates: int) -> None:
    for case, outs in noop_outs:
        n_out = len(case.expected) - n_mutates or len(case.expected)  # returns nothing: the in-place arguments are the result
        if len(outs) == len(case.expected) and not any(
                r.problem for r in compare_outputs(case.expected[:n_out], outs[:n_out], atol, rtol)):
            f.fail("kernel-independent: the output still matches with every kernel launch replaced by a no-op")


def _drift(f: Findings, payload: dict) -> None:
    if payload.get("global_state"):
        f.fail(f"global-state: the candidate changed {', '.join(map(str, payload['global_state'][:3]))}")
    if payload.get("patched"):
        f.fail(f"patched: the candidate replaced {', '.join(map(str, payload['patched'][:4]))}")


def judge_bench(f: Findings, material: Material, bench: dict | None, kept: list, atol, rtol) -> None:
    """The timed calls: every one launched, and each sampled or fresh one right."""
    if not bench:
        return
    if bench.get("launches_min", 0) == 0:
        f.fail("no-launch: a timed call launched no kernel")
    for case_index, outs in zip(bench.get("kept", []), kept):
        case = material.cases[case_index]
        n_out = len(case.expected) - len(material.mutates)
        if outs is None or len(outs) < n_out or any(
                r.problem for r in compare_outputs(case.expected[:n_out], outs[:n_out], atol, rtol)):
            f.fail(f"cached-output: a timed call on {case.label} returned a wrong result "
                   "(the benchmark saw a different kernel than verification)")
            return


def run_result(f: Findings, material: Material, started: float, timings: dict | None, ran: bool) -> dict:
    if ran and not f.compared_trials and not f.reasons:
        f.fail("no-variants: no input variant was compared (trials must be at least 1)")
    reasons = list(f.reasons.values())
    codes = {r.split(":", 1)[0] for r in reasons}
    order = ["load", "run", "compare", "anticheat"]
    failed = [CHECK_OF.get(c, "run") for c in codes]
    return {
        "correct": not reasons,
        "check": min(failed, key=order.index) if failed else None,  # the first check that failed, if any
        "reasons": reasons,
        "variants": sorted(f.variants.values(), key=lambda v: v["index"]),
        "stress": sorted(f.stress.values(), key=lambda v: v["case"]) + material.skipped,
        "launches": f.launches,
        "anticheat": {c: ("fail" if c in codes else "pass") if ran else "not run" for c in ANTICHEAT},
        "timings": timings,
        "calls": len(material.plan),
        "run_s": round(time.perf_counter() - started, 3),
    }


def fingerprint(values: list) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for v in values:
        if isinstance(v, torch.Tensor):
            digest.update(str((v.dtype, tuple(v.shape))).encode())
            digest.update(v.reshape(-1).contiguous().view(torch.uint8).numpy().tobytes() if v.numel() else b"")
        else:
            digest.update(repr(v).encode())
    return digest.hexdigest()
