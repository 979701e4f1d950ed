"""Starting and resuming agent runs: the one library entry point the CLI and the UI call.

A run is a LangGraph thread (thread id = the run key) checkpointed after every node in
`<registry dir>/checkpoints.db` with durability "sync", so a run killed with SIGKILL resumes from
its last completed node; candidates and verdicts already recorded are never evaluated again. A run
stopped by SIGINT or SIGTERM (sandbox/interrupt.py) first stops its sandbox's job, then is recorded
"interrupted", and resumes the same way."""
from __future__ import annotations

import logging
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from langgraph.checkpoint.sqlite import SqliteSaver

from opforge.agents.config import RunOptions
from opforge.agents.drafters.select import recorded_endpoint, select_drafter
from opforge.agents.graph import build_graph
from opforge.agents.runlock import RunLock
from opforge.agents.state import RunContext
from opforge.harness.errors import OpforgeError
from opforge.harness.verify import prepare
from opforge.registry import RegistryError
from opforge.registry.rows import RunRow
from opforge.sandbox import get_sandbox
from opforge.sandbox.interrupt import signal_name

log = logging.getLogger("opforge.agents")
RESUMABLE = ("running", "interrupted")  # a run whose process died still reads "running"


@dataclass(frozen=True)
class RunSummary:
    run_key: str
    op: str
    status: str
    best_candidate_id: int | None
    stop_reason: str | None
    promoted: dict | None
    tokens: int
    rounds: int
    note: str | None = None


def checkpoint_path(registry) -> Path:
    return Path(registry.path).parent / "checkpoints.db"


def start_run(spec_path: str | Path, options: RunOptions, registry,
              on_event: Callable[[dict], None] | None = None) -> RunSummary:
    spec, hardware = prepare(spec_path, options.verify)
    drafter, note = select_drafter(options.drafter)
    spec_id = registry.record_spec(spec.name, str(spec.path), spec.source)
    config = {"spec_path": str(spec.path), "spec_sha256": spec.sha256, **options.recorded()}
    if endpoint := recorded_endpoint(drafter):  # what a resume must talk to again (never the key)
        config["llm"] = endpoint
    run = registry.create_run(options.run_key or registry.new_run_key(), spec.name, spec_id, options.backend, drafter.name,
                              hardware.fingerprint, config)
    emit = on_event or (lambda event: None)
    emit({"node": "start", "run_key": run.run_key, "message": f"run {run.run_key}: {spec.name} with {drafter.describe()}"
          + (f" ({note})" if note else "")})
    state = {"run_key": run.run_key, "round": 0, "started_at": time.time(), "attempts": [], "round_best": [],
             "tokens": 0, "best": None}
    lock = RunLock(registry.path, run.run_key)
    lock.acquire()  # a fresh run key: nobody else holds it; held so that no batch resumes a live run
    try:
        return _drive(state, run, spec, spec_id, hardware, drafter, options, registry, emit, note)
    finally:
        lock.release()


def resume_run(run_key: str, registry, on_event: Callable[[dict], None] | None = None) -> RunSummary:
    run = registry.get_run(run_key)
    if run is None:
        raise OpforgeError(f"no run with key '{run_key}' (see: opforge runs)")
    if run.status not in RESUMABLE:
        raise OpforgeError(f"run {run_key} already finished ({run.status}: {run.stop_reason or run.error or ''})")
    lock = RunLock(registry.path, run_key)
    if not lock.acquire():
        raise OpforgeError(f"run {run_key} is being driven by another process; it resumes only once that one stops")
    try:
        if run.status == "interrupted":  # running again: how it was stopped no longer describes it
            run = registry.update_run(run_key, status="running", if_status="interrupted")
        return _resume(run, registry, on_event)
    finally:
        lock.release()


def _resume(run, registry, on_event) -> RunSummary:
    run_key, config = run.run_key, run.config
    options = RunOptions.from_recorded(run.drafter, run.backend, config)
    spec, hardware = prepare(config["spec_path"], options.verify)
    if spec.sha256 != config["spec_sha256"]:
        raise OpforgeError(f"{config['spec_path']} changed since run {run_key} started; start a new run")
    drafter, note = select_drafter(run.drafter, endpoint=config.get("llm"))
    emit = on_event or (lambda event: None)
    emit({"node": "start", "run_key": run_key, "message": f"resuming run {run_key}: {spec.name}"})
    return _drive(None, run, spec, run.spec_id, hardware, drafter, options, registry, emit, note)


def cancel_run(run_key: str, registry) -> RunRow:
    """Mark a running (or interrupted) run cancelled and stop the process that drives it on this
    machine with SIGTERM (RunLock.stop_holder): the job it is running ends at once, with nothing
    of it recorded (sandbox/interrupt.py). The checkpoint stays, but a cancelled run is not resumed."""
    run = registry.get_run(run_key)
    if run is None:
        raise OpforgeError(f"no run with key '{run_key}' (see: opforge runs)")
    try:  # conditional in one transaction: a run that finishes meanwhile keeps its outcome
        row = registry.update_run(run_key, status="cancelled", stop_reason="cancelled by the user",
                                  if_status=run.status if run.status in RESUMABLE else "running")
    except RegistryError:
        raise OpforgeError(f"run {run_key} already finished ({registry.get_run(run_key).status})") from None
    RunLock(registry.path, run_key).stop_holder()
    return row


def _drive(state, run, spec, spec_id, hardware, drafter, options, registry, emit, note) -> RunSummary:
    sandbox = get_sandbox(options.verify.sandbox)  # one warm sandbox for the whole run
    # 30 s busy wait, as the registry's: concurrent runs (opforge batch --jobs N) share this file.
    conn = sqlite3.connect(checkpoint_path(registry), timeout=30.0, check_same_thread=False)
    try:
        ctx = RunContext(registry=registry, drafter=drafter, sandbox=sandbox, spec=spec, spec_id=spec_id,
                         run_id=run.id, hardware=hardware, verify_options=options.verify, budget=options.budget,
                         backend=options.backend, on_event=emit)
        graph = build_graph(SqliteSaver(conn))
        config = {"configurable": {"thread_id": run.run_key}, "recursion_limit": 10 * options.budget.rounds + 20}
        for _update in graph.stream(state, config, context=ctx, stream_mode="updates", durability="sync"):
            if registry.get_run(run.run_key).status == "cancelled":  # cancel_run(), from another process
                emit({"node": "cancel", "run_key": run.run_key, "message": f"run {run.run_key} cancelled"})
                break
        final = graph.get_state(config).values
    except OpforgeError as exc:  # the drafter cannot go on (endpoint, key, model): the run failed
        registry.update_run(run.run_key, status="failed", error=str(exc))
        raise
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM (sandbox/interrupt.py): stop the job first
        sandbox.close()
        _mark_interrupted(registry, run.run_key, exc)
        raise
    finally:
        sandbox.close()
        conn.close()
    row = registry.get_run(run.run_key)
    return RunSummary(run_key=run.run_key, op=spec.name, status=row.status, best_candidate_id=row.best_candidate_id,
                      stop_reason=row.stop_reason, promoted=final.get("promoted"), tokens=row.tokens,
                      rounds=final.get("round", 0) + 1, note=note)


def _mark_interrupted(registry, run_key: str, exc: BaseException) -> None:
    """Record a run stopped by a signal as interrupted (resumable); a run cancelled meanwhile stays so."""
    try:
        registry.update_run(run_key, status="interrupted", stop_reason=f"interrupted by {signal_name(exc)}",
                            if_status="running")
    except RegistryError:  # cancelled (opforge cancel stops its process so) or finished meanwhile
        pass
    except Exception as problem:  # the registry is busy or gone: the run reads "running", resumable all the same
        log.warning("run %s: could not record the interrupt (%s)", run_key, problem)


def interrupted_line(registry, run_key: str | None, exc: BaseException) -> str:
    """What `opforge run` says when a signal stopped it: the run's fate and how to go on."""
    if run_key is None:
        return f"{signal_name(exc)}: stopped before the run began"
    row = registry.get_run(run_key)
    if row is not None and row.status == "cancelled":
        return f"{signal_name(exc)}: run {run_key} cancelled"
    return f"{signal_name(exc)}: run {run_key} interrupted; resume with: opforge run --resume {run_key}"
