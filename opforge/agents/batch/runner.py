"""`run_batch`: plan the ops, hand the ones to run to an executor (local worker processes or Ray),
record ops that hit their time limit as failed runs, and build the report.

Events for a progress view, in order per op: {"kind": "plan", "tasks"}, then {"kind": "start",
"op", "action"}, {"kind": "progress", "op", "node", "message", "run_key"} while it runs, and
{"kind": "done", "op", "result"}; skipped ops get only "done"."""
from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from opforge.agents.batch.plan import OpTask, plan_batch
from opforge.agents.batch.report import BatchReport, op_row, skipped_outcome
from opforge.agents.config import RunOptions
from opforge.agents.run import checkpoint_path
from opforge.harness.errors import OpforgeError
from opforge.harness.hardware import detect
from opforge.registry import Registry

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class BatchOptions:
    run: RunOptions = field(default_factory=RunOptions)
    jobs: int | None = None  # None: 1 locally; on Ray, one per CPU (or GPU) of the cluster
    executor: str = "local"
    address: str | None = None  # Ray cluster address; None starts a local Ray instance
    op_timeout_s: float = 3600.0
    force: bool = False  # run ops that already have a verified kernel again

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise OpforgeError(f"executor must be one of {', '.join(EXECUTORS)}, got {self.executor!r}")
        if self.jobs is not None and self.jobs < 1:
            raise OpforgeError("--jobs must be at least 1")
        if self.op_timeout_s <= 0:
            raise OpforgeError("--op-timeout must be positive")


def run_batch(paths: list[Path], options: BatchOptions, registry: Registry,
              on_event: Callable[[dict], None] | None = None) -> BatchReport:
    emit = on_event or (lambda event: None)
    started, clock = datetime.now(timezone.utc), time.monotonic()
    executor = _executor(options, registry)
    try:
        hardware = executor.hardware()
        tasks = plan_batch(paths, registry, options.run.backend, hardware, options.force)
        if not executor.resumes:  # a run left mid-way elsewhere has no checkpoint this executor reaches
            tasks = [t if t.action != "resume" else OpTask(t.op, t.spec_path, t.sha256, "run") for t in tasks]
        emit({"kind": "plan", "tasks": tasks})
        results = {}
        for task in (t for t in tasks if t.action == "skip"):
            results[task.op] = skipped_outcome(task)
            emit({"kind": "done", "op": task.op, "result": results[task.op]})
        todo = [t for t in tasks if t.action != "skip"]
        if todo:
            on_timeout = lambda task, run_key, message: record_failure(  # noqa: E731
                registry, task, options.run, hardware, message, run_key)
            results |= executor.run(todo, options.run, emit, on_timeout)
    finally:
        executor.close()
    return BatchReport(executor=options.executor, jobs=executor.jobs, backend=options.run.backend,
                       hardware=hardware, started_at=started.isoformat(timespec="seconds"),
                       finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                       wall_s=round(time.monotonic() - clock, 2),
                       rows=[op_row(t, results[t.op], registry, hardware) for t in tasks if t.op in results])


class _LocalFront:
    """The local executor with the driver-side setup it needs."""

    resumes = True

    def __init__(self, options: BatchOptions, registry: Registry) -> None:
        from opforge.agents.batch.local import LocalExecutor

        self.jobs = options.jobs or 1
        self.device = options.run.verify.device
        self.inner = LocalExecutor(registry.path, self.jobs, options.op_timeout_s)
        prepare_checkpoints(checkpoint_path(registry))

    def hardware(self) -> str:
        return detect(force_cpu=self.device == "cpu").fingerprint

    def run(self, *args):
        return self.inner.run(*args)

    def close(self) -> None:
        pass


def _executor(options: BatchOptions, registry: Registry):
    if options.executor == "ray":
        from opforge.agents.batch.ray_exec import RayExecutor

        return RayExecutor(registry, options.address, options.jobs, options.op_timeout_s, options.run.verify.device)
    return _LocalFront(options, registry)


def prepare_checkpoints(path: Path) -> None:
    """Create the checkpoint database in WAL mode before workers open it together: switching a
    file to WAL needs an exclusive lock and fails at once (no busy wait) while others hold it."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, timeout=30.0, check_same_thread=False)
    try:
        SqliteSaver(conn).setup()
    finally:
        conn.close()


def record_failure(registry: Registry, task: OpTask, options: RunOptions, hardware: str, message: str,
                   run_key: str | None) -> None:
    """Close a stopped op's run as failed; an op stopped before its run began gets a failed run of
    its own, so the registry shows what happened to every op of the batch."""
    run = registry.get_run(run_key) if run_key else None
    if run is None:
        source = Path(task.spec_path).read_text(encoding="utf-8")
        spec_id = registry.record_spec(task.op, task.spec_path, source)
        config = {"spec_path": task.spec_path, "spec_sha256": task.sha256, **options.recorded()}
        run = registry.create_run(registry.new_run_key(), task.op, spec_id, options.backend,
                                  options.drafter or "auto", hardware, config)
    if run.status in ("running", "interrupted"):  # stopped at its time limit: failed, not to be resumed
        registry.update_run(run.run_key, status="failed", error=message)
