"""Local parallelism: one worker process per running op, at most `jobs` at a time, each with its own
Registry connection on the batch's SQLite file (WAL, busy timeout and write retries keep concurrent
writers apart; see registry/db.py).

Workers come from a forkserver that imported the agent loop once, so an op starts in well under a
second instead of paying the torch/triton/langgraph import again. An op past its time limit is
stopped with its whole process tree (sandbox jobs run in sessions of their own, so a process group
kill would miss them) and its run is closed as failed; the other ops go on."""
from __future__ import annotations

import multiprocessing as mp
import os
import multiprocessing.connection
import signal
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from opforge.agents.background import pid_alive
from opforge.agents.batch.worker import local_child, outcome
from opforge.agents.config import RunOptions
from opforge.sandbox.process import descendants

GRACE_S = 5.0  # after SIGTERM, time for a worker to close its sandbox before SIGKILL


@dataclass
class _Slot:
    task: object
    proc: mp.process.BaseProcess
    started: float
    conn: object | None  # this worker's own pipe: a worker killed mid-message cannot block the others
    run_key: str | None = None
    result: dict | None = None


class PipeEvents:
    """What a worker writes its events and outcome to: one pipe per worker, not a shared Queue
    (a Queue's cross-process write lock stays taken when its holder is SIGKILLed at a time limit)."""

    def __init__(self, conn) -> None:
        self.conn = conn

    def put(self, item) -> None:
        self.conn.send(item)


def _context():
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["opforge.agents.batch.worker"])
        return ctx
    return mp.get_context("spawn")


class LocalExecutor:
    resumes = True  # interrupted runs live in this registry's checkpoints and can be continued

    def __init__(self, db_path: Path, jobs: int, op_timeout_s: float) -> None:
        self.db_path, self.jobs, self.op_timeout_s = str(db_path), jobs, op_timeout_s

    def run(self, tasks: list, options: RunOptions, on_event, on_timeout) -> dict[str, dict]:
        """Run every task; returns op -> outcome. `on_timeout(task, run_key, message)` closes a
        killed op's run. KeyboardInterrupt stops every worker (runs stay resumable) and propagates."""
        ctx, pending, running, results = _context(), deque(tasks), {}, {}
        try:
            while pending or running:
                while pending and len(running) < self.jobs:
                    task = pending.popleft()
                    receive, send = ctx.Pipe(duplex=False)
                    proc = ctx.Process(target=local_child, name=f"opforge-batch-{task.op}", daemon=True,
                                       args=(task, options, self.db_path, PipeEvents(send), dict(os.environ)))
                    proc.start()
                    send.close()  # the worker holds the only write end: its exit reads as EOF here
                    running[task.op] = _Slot(task, proc, time.monotonic(), receive, run_key=task.run_key)
                    on_event({"kind": "start", "op": task.op, "action": task.action})
                self._drain(running, on_event)
                for op in list(running):
                    done = self._reap(running[op], running, on_event, on_timeout)
                    if done is not None:
                        results[op] = done
                        self._close(running.pop(op))
                        on_event({"kind": "done", "op": op, "result": done})
        except KeyboardInterrupt:
            for slot in running.values():
                stop_tree(slot.proc.pid)
            raise
        finally:
            for slot in running.values():
                self._close(slot)
        return results

    @staticmethod
    def _close(slot: _Slot) -> None:
        if slot.conn is not None:
            slot.conn.close()
            slot.conn = None

    def _drain(self, running: dict, on_event, wait_s: float = 0.2) -> None:
        by_conn = {slot.conn: slot for slot in running.values() if slot.conn is not None}
        if not by_conn:
            time.sleep(wait_s)
            return
        for conn in mp.connection.wait(list(by_conn), timeout=wait_s):
            slot = by_conn[conn]
            try:
                while conn.poll():
                    kind, op, payload = conn.recv()
                    if kind == "event":
                        slot.run_key = slot.run_key or payload.get("run_key")
                        on_event({"kind": "progress", "op": op} | payload)
                    else:
                        slot.result = payload
            except (EOFError, OSError):  # the worker exited (or was killed): nothing more will come
                self._close(slot)

    def _reap(self, slot: _Slot, running, on_event, on_timeout) -> dict | None:
        if slot.result is None and not slot.proc.is_alive():
            self._drain(running, on_event, wait_s=1.0)  # the result may still be in the pipe
        if slot.result is not None:
            slot.proc.join(timeout=GRACE_S)
            return slot.result
        elapsed = time.monotonic() - slot.started
        if not slot.proc.is_alive():
            return outcome(slot.task.op, run_key=slot.run_key, time_s=round(elapsed, 2),
                           error=f"worker process died (exit code {slot.proc.exitcode})")
        if elapsed > self.op_timeout_s:
            stop_tree(slot.proc.pid)
            slot.proc.join(timeout=GRACE_S)
            message = f"op time limit ({self.op_timeout_s:g} s) exceeded; stopped"
            on_timeout(slot.task, slot.run_key, message)
            return outcome(slot.task.op, status="timeout", run_key=slot.run_key, error=message,
                           time_s=round(elapsed, 2))
        return None


# -- process trees ---------------------------------------------------------------------------------


def _signal(pids, sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def stop_tree(pid: int, grace_s: float = GRACE_S) -> None:
    """SIGTERM the worker (it unwinds and closes its sandbox), then SIGKILL it and every
    process that was or is below it."""
    tree = descendants(pid)
    _signal([pid], signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.05)
    tree |= descendants(pid)
    _signal([pid, *tree], signal.SIGKILL)
