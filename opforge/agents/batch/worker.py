"""One op of a batch, run where the executor put it: a local worker process (on the batch's registry
file, next to the other workers) or a Ray task (on a throwaway registry whose contents it returns).
The op runs the same loop as `opforge run`, or resumes the run an interrupted batch left."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable

from opforge.agents.runlock import RunLock
from opforge.agents.run import RunOptions, RunSummary, resume_run, start_run
from opforge.harness.errors import OpforgeError
from opforge.registry import Registry
from opforge.sandbox.errors import SandboxError
from opforge.sandbox.interrupt import exit_code, raise_on_signals, signal_name

Emit = Callable[[dict], None]


def outcome(op: str, **fields) -> dict:
    """The plain result of one op that executors hand back to the driver."""
    base = {"op": op, "status": "error", "run_key": None, "best_candidate_id": None, "stop_reason": None,
            "error": None, "tokens": 0, "time_s": None}
    return base | fields


def run_op(task, options: RunOptions, registry: Registry, emit: Emit) -> dict:
    """Start (or resume) the op's run; never raises for a failing op, only returns its outcome."""
    seen: dict = {}
    if task.action == "resume":
        seen["run_key"], seen["lock"] = task.run_key, RunLock(registry.path, task.run_key)
        if not seen["lock"].acquire():
            return outcome(task.op, run_key=task.run_key, error=f"run {task.run_key} is in progress elsewhere")

    def forward(event: dict) -> None:
        if event.get("run_key") and "run_key" not in seen:
            seen["run_key"] = event["run_key"]
            seen["lock"] = RunLock(registry.path, event["run_key"])
            seen["lock"].acquire()  # a fresh run key: nobody else holds it
        emit({"node": event.get("node", ""), "message": str(event.get("message", "")), "run_key": event.get("run_key")})

    try:
        return _drive_op(task, options, registry, forward, seen)
    finally:
        if "lock" in seen:
            seen["lock"].release()


def _drive_op(task, options: RunOptions, registry: Registry, forward: Emit, seen: dict) -> dict:
    try:
        if task.action == "resume":
            summary = resume_run(task.run_key, registry, on_event=forward)
        else:
            summary = start_run(task.spec_path, options, registry, on_event=forward)
    except (OpforgeError, SandboxError) as exc:  # bad spec, drafter endpoint down, no sandbox...: this op failed
        if task.action == "resume":  # it cannot be continued (spec moved, endpoint gone): close it, so
            close_failed(registry, task.run_key, f"could not resume: {exc}")  # the next batch starts afresh
        return outcome(task.op, run_key=seen.get("run_key"), error=str(exc))
    except Exception as exc:  # a bug in one op must not stop the others; the run is closed as failed
        close_failed(registry, seen.get("run_key"), f"{type(exc).__name__}: {exc}")
        return outcome(task.op, run_key=seen.get("run_key"), error=f"{type(exc).__name__}: {exc}")
    return summary_outcome(task.op, summary)


def summary_outcome(op: str, summary: RunSummary) -> dict:
    status = "verified" if summary.best_candidate_id else "failed"
    return outcome(op, status=status, run_key=summary.run_key, best_candidate_id=summary.best_candidate_id,
                   stop_reason=summary.stop_reason, tokens=summary.tokens)


def close_failed(registry: Registry, run_key: str | None, error: str) -> None:
    if run_key:
        run = registry.get_run(run_key)
        if run is not None and run.status in ("running", "interrupted"):
            registry.update_run(run_key, status="failed", error=error)


# -- the local worker process ------------------------------------------------------------------


def local_child(task, options: RunOptions, db_path: str, queue, environ: dict[str, str]) -> None:
    """Entry point of a local worker process: its own Registry on the batch's file. `environ` is the
    driver's environment now: a forkserver keeps the one it was started with, which may be stale."""
    os.environ.clear()
    os.environ.update(environ)
    started = time.monotonic()

    def emit(event: dict) -> None:
        queue.put(("event", task.op, event))

    # SIGTERM from the driver (op time limit, batch interrupted) or from `opforge cancel`, or Ctrl-C
    # to the whole process group: unwind, so that the op's sandbox stops its job and the run is
    # recorded as interrupted (or stays cancelled); the driver kills what is left.
    try:
        with raise_on_signals(), Registry(Path(db_path)) as reg:
            result = run_op(task, options, reg, emit)
    except KeyboardInterrupt as exc:
        try:
            queue.put(("done", task.op, outcome(task.op, error=f"stopped by {signal_name(exc)}",
                                                time_s=round(time.monotonic() - started, 2))))
        except OSError:  # the driver is gone (it was interrupted too)
            pass
        sys.exit(exit_code(exc))
    except Exception as exc:  # e.g. the registry could not be opened
        result = outcome(task.op, error=f"{type(exc).__name__}: {exc}")
    queue.put(("done", task.op, result | {"time_s": round(time.monotonic() - started, 2)}))
