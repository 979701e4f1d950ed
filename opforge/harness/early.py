"""Fail fast: a wrong kernel is rejected at the first case that shows it, not after the whole plan.

The judge names checkpoints in its call plan (`checkpoints`): after the main case's first call,
then after the last call of each group (the other trials, the stress cases, the larger case, the
repeated calls). At each, the candidate's process (harness/checker.py) leaves every output so far
in the job directory (`early.pt`, written whole and renamed into place); a thread of the judge's
process (`Watch`, started by the sandbox with the job: `Job.watch`) judges that prefix of the plan
exactly as it would judge the whole, and answers (`early.answer`) `go N`, or `stop` where a value or
the run is wrong (a load, run or compare finding) and no cheat rule fired: a cheat goes on, so the
whole run shows every rule it breaks. After the first checkpoint the candidate's process waits for
that answer (at most ANSWER_WAIT_S); after later ones it goes on and reads the answer before each
call, so the judge's compare overlaps the run and a wrong run stops wherever the judge caught up.
A `replayable` job (VerifyOptions.replayable: the RL reward) waits at every checkpoint instead, so
where a wrong run stops, and so its verdict, depends on the seed alone (same kernel and seed, same
reward). On `stop` it runs no more calls and returns what it has.

Nothing here can make a wrong kernel pass: the candidate can write both files (they lie in its
job directory), but a forged checkpoint only decides whether the judge stops the run early (with
a failing verdict), and a run that answered fewer calls than asked fails unless this judge itself
said stop (verify.py reads `Watch.stopped`, never the candidate's report).
"""
from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path

CHECKPOINT = "early.pt"
ANSWER = "early.answer"
ANSWER_WAIT_S = 30.0  # a checkpoint's wait for the judge (a judge that never answers: go on)
POLL_S = 0.02
MAX_CHECKPOINTS = 5


# -- the judge's side --------------------------------------------------------------------------------

def checkpoints(material) -> list[int]:
    """Plan indices after which the candidate's process leaves its outputs: the first call (the main
    case, first trial), then the last call of each group of the plan (trials, stress, larger,
    repeated calls), never the last call (the job's own outputs follow at once)."""
    plan = material.plan
    if len(plan) < 2:
        return []

    def group(step: dict) -> str:
        return "noop" if step.get("noop") else "repeat" if step.get("repeat") else material.cases[step["case"]].kind

    ends = [i for i in range(len(plan) - 1) if group(plan[i]) != group(plan[i + 1])]
    return sorted({0, *ends})[:MAX_CHECKPOINTS]


def output_cap(material, after: list[int]) -> int:
    """Bytes the checkpoint file may take: the outputs of every call up to the last checkpoint."""
    if not after:
        return 0
    per_case = [sum(t.numel() * t.element_size() for t in c.expected) for c in material.cases]
    total = sum(per_case[step["case"]] for step in material.plan[:max(after) + 1])
    return int(total * 1.25) + (4 << 20)


def prefix(material, n: int):
    """The material with its plan cut to the first `n` calls (the rest not run): judged as a whole."""
    from dataclasses import replace

    return replace(material, plan=material.plan[:n], bench=None)


class Watch:
    """Judges the checkpoints of one running job (called by the sandbox in a thread of its own with
    the job's host directory and an event set when the job is over)."""

    def __init__(self, material, atol, rtol, cap: int) -> None:
        self.material, self.atol, self.rtol, self.cap = material, atol, rtol, cap
        self.stopped: int | None = None  # calls judged when this judge said stop
        self._seen: tuple | None = None

    def __call__(self, host: Path, done: threading.Event) -> None:
        while self.stopped is None and not done.wait(POLL_S):
            try:
                self._poll(host)
            except Exception:  # a forged or half-written file decides nothing: the whole run is judged
                pass

    def _poll(self, host: Path) -> None:
        from opforge.harness import evidence
        from opforge.harness.judge import CHECK_OF
        from opforge.sandbox.base import read_capped

        path = host / CHECKPOINT
        try:
            st = path.lstat()
        except FileNotFoundError:
            return
        if (st.st_mtime_ns, st.st_size, st.st_ino) == self._seen:
            return
        self._seen = (st.st_mtime_ns, st.st_size, st.st_ino)
        data, _problem = read_capped(path, self.cap)
        outputs, calls = _loaded(data)
        if outputs is None or calls is None or len(calls) != len(outputs) or not 0 < len(calls) <= len(self.material.plan):
            return
        findings = evidence.judge_calls(prefix(self.material, len(calls)), {"calls": calls}, outputs, self.atol, self.rtol)
        wrong = [code for code in findings.reasons if CHECK_OF.get(code, "run") != "anticheat"]
        stop = bool(wrong) and len(wrong) == len(findings.reasons)  # a cheat runs the whole plan
        if stop:
            self.stopped = len(calls)
        _answer(host, "stop" if stop else f"go {len(calls)}")


def _loaded(data: bytes | None) -> tuple[list | None, list | None]:
    """(outputs, call reports) of a checkpoint, parsed once by the safe unpickler; None for either
    that is missing or not a list (of report dicts)."""
    import torch

    try:
        loaded = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception:  # a forged or truncated file
        return None, None
    if not isinstance(loaded, dict):
        return None, None
    outputs, calls = loaded.get("outputs"), loaded.get("calls")
    return (outputs if isinstance(outputs, list) else None,
            calls if isinstance(calls, list) and all(isinstance(c, dict) for c in calls) else None)


def _answer(host: Path, text: str) -> None:
    tmp = host / f".{ANSWER}.{os.getpid()}"
    tmp.write_text(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, host / ANSWER)


def not_run(material, ran: int) -> dict:
    """What a run stopped early did not do: the calls and the cases (by label, in plan order)."""
    rest = material.plan[ran:]
    labels = list(dict.fromkeys(
        "no-op probe" if s.get("noop") else f"{material.cases[s['case']].label} (repeated)" if s.get("repeat")
        else material.cases[s["case"]].label for s in rest))
    return {"calls": len(rest), "of": len(material.plan), "cases": labels,
            "reason": f"not run: the judge stopped the run after call {ran} of {len(material.plan)}, "
                      "whose outputs already fail (fail fast)"}


# -- the candidate's side (harness/checker.py) ------------------------------------------------------

def leave(job: dict, calls: list, outputs: list) -> None:
    """The outputs so far, for the judge: written whole, then renamed into place."""
    import torch

    path = job["early_path"]
    tmp = f"{path}.tmp"
    torch.save({"outputs": outputs, "calls": calls}, tmp)
    os.replace(tmp, path)


def told_to_stop(job: dict) -> bool:
    return _read_answer(job) == "stop"


def await_answer(job: dict, calls: int) -> None:
    """At a checkpoint (the first, or each in a replayable job): wait until the judge has answered it
    (or ANSWER_WAIT_S passed)."""
    deadline = time.monotonic() + ANSWER_WAIT_S
    while time.monotonic() < deadline:
        answer = _read_answer(job)
        if answer == "stop" or answer == f"go {calls}":
            return
        time.sleep(POLL_S / 2)


def _read_answer(job: dict) -> str | None:
    try:
        with open(os.path.join(os.path.dirname(job["early_path"]), ANSWER)) as fh:
            return fh.read(64).strip()
    except (OSError, ValueError):
        return None


def finish(job: dict) -> None:
    """The run is over: the checkpoint is not read again (its bytes are in the outputs)."""
    try:
        os.unlink(job["early_path"])
    except OSError:
        pass
