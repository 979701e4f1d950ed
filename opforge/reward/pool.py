"""The reward server's executors: a bounded queue of scoring requests and the workers that drain it.

`LocalPool`: worker processes on this machine (worker.serve), each with its own pipe and a Scorer
held for its life; a worker that dies (or passes the request time limit, and is stopped with its
process tree) has its request answered with an error JSON and is replaced. `RayRewardPool`: the
same queue drained by Ray tasks (worker.ray_score) through agents/batch/raypool.py, the code path
of `opforge batch --executor ray`.

Back-pressure: `admit` takes a batch whole or not at all: it is refused (the server answers 503 with
Retry-After) when requests are already waiting and the batch would take the queue past its capacity.
A batch larger than the capacity is taken when nothing waits, so every batch can get in; memory
stays bounded by the capacity plus one batch (whose size the server's body limit bounds)."""
from __future__ import annotations

import math
import multiprocessing as mp
import multiprocessing.connection
import os
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from opforge.reward.worker import error_result, ray_score, serve

GRACE_S = 10.0  # for idle workers to close their sandboxes on close()
RESTART_PAUSE_S = 1.0  # before replacing a worker that died within this long of its start (no crash loop)
DEFAULT_SERVICE_S = 5.0  # a request's expected scoring time before any was measured (Retry-After)
STOPPING = "the reward server is stopping"


class Job:
    """One request in the queue; `result` is set exactly once, then `done` is set."""

    def __init__(self, req: dict) -> None:
        self.req, self.result, self.done, self.started = req, None, threading.Event(), None

    def finish(self, result: dict) -> None:
        if not self.done.is_set():
            self.result = result
            self.done.set()


class _Queue:
    executor = "?"

    def __init__(self, workers: int, capacity: int) -> None:
        self.workers, self.capacity = workers, capacity
        self.cond = threading.Condition()
        self.pending: deque[Job] = deque()
        self.inflight = self.scored = 0
        self.busy_s = 0.0  # the scoring time of every request answered, for Retry-After
        self.stopping = False

    def admit(self, reqs: list[dict]) -> list[Job] | None:
        """The batch's jobs, queued; None (nothing queued) when the queue is full or the server stops."""
        with self.cond:
            if self.stopping or (self.pending and len(self.pending) + len(reqs) > self.capacity):
                return None
            jobs = [Job(req) for req in reqs]
            self.pending.extend(jobs)
            self.cond.notify_all()
            return jobs

    def retry_after(self) -> int:
        """Seconds until the queue has likely drained by one batch: waiting x mean scoring time / workers."""
        with self.cond:
            mean = self.busy_s / self.scored if self.scored else DEFAULT_SERVICE_S
            waiting = len(self.pending) + self.inflight
        return max(1, min(120, math.ceil(waiting * mean / max(1, self.workers))))

    def _take(self) -> Job | None:
        with self.cond:
            if not self.pending or self.stopping:
                return None
            job = self.pending.popleft()
            self.inflight += 1
            job.started = time.monotonic()
            return job

    def _answer(self, job: Job, result: dict) -> None:
        with self.cond:
            self.inflight -= 1
            self.scored += 1
            self.busy_s += time.monotonic() - job.started
        job.finish(result)

    def _idle_wait(self, seconds: float) -> bool:
        """Wait for new requests; whether the pool still runs."""
        with self.cond:
            if not self.pending and not self.stopping:
                self.cond.wait(seconds)
            return not self.stopping

    def _stop_pending(self) -> None:
        with self.cond:
            self.stopping = True
            waiting, self.pending = list(self.pending), deque()
            self.cond.notify_all()
        for job in waiting:
            job.finish(error_result(job.req, STOPPING))

    def health(self) -> dict:
        with self.cond:
            return {"workers": self.workers, "queued": len(self.pending), "inflight": self.inflight,
                    "scored": self.scored, "executor": self.executor, "capacity": self.capacity}


# -- local worker processes ------------------------------------------------------------------------


@dataclass(eq=False)
class _Worker:
    proc: mp.process.BaseProcess
    conn: object
    job: Job | None = None
    job_id: int = 0
    started: float = field(default_factory=time.monotonic)


def _context():
    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["opforge.reward.score"])  # torch and the harness once, not per worker
        return ctx
    return mp.get_context("spawn")


class LocalPool(_Queue):
    executor = "local"

    def __init__(self, workers: int, capacity: int, scorer_options: dict, request_timeout_s: float) -> None:
        super().__init__(workers, capacity)
        self.scorer_options, self.request_timeout_s = scorer_options, request_timeout_s
        self.ctx, self.replaced, self._ids = _context(), 0, 0
        self.slots = [self._start() for _ in range(workers)]
        self.thread = threading.Thread(target=self._loop, name="opforge-reward-dispatch", daemon=True)
        self.thread.start()

    def _start(self) -> _Worker:
        mine, theirs = self.ctx.Pipe(duplex=True)
        proc = self.ctx.Process(target=serve, name="opforge-reward-worker", daemon=True,
                                args=(theirs, self.scorer_options, dict(os.environ)))
        proc.start()
        theirs.close()  # the worker holds the only other end: its death reads as EOF here
        return _Worker(proc, mine)

    def health(self) -> dict:
        slots = list(self.slots)
        busy = [w.proc.pid for w in slots if w.job is not None]
        alive = sum(1 for w in slots if w.proc.is_alive())
        return super().health() | {"workers": alive, "pids": [w.proc.pid for w in slots], "busy_pids": busy,
                                   "replaced": self.replaced}

    def _loop(self) -> None:
        while not self.stopping:
            try:
                self._step()
            except Exception as exc:  # a bug here must not leave every waiting request hanging: say it, go on
                print(f"opforge reward-server: dispatch error {type(exc).__name__}: {exc}", file=sys.stderr)
                time.sleep(0.2)

    def _step(self) -> None:
        for i, worker in enumerate(self.slots):
            if worker.job is None:
                job = self._take()
                if job is None:
                    break
                self._assign(i, job)
        busy = [w for w in self.slots if w.job is not None]
        if not busy:
            self._idle_wait(0.2)
            return
        waitables = {w.conn: w for w in busy} | {w.proc.sentinel: w for w in busy}
        ready = {id(waitables[r]): waitables[r] for r in mp.connection.wait(list(waitables), timeout=0.2)}
        for worker in ready.values():  # its pipe and its sentinel may both be ready: once each
            if any(w is worker for w in self.slots):
                self._collect(worker)
        for i, worker in enumerate(self.slots):
            if worker.job is not None and time.monotonic() - worker.job.started > self.request_timeout_s:
                self._replace(i, f"request time limit ({self.request_timeout_s:g} s) exceeded; worker stopped")

    def _assign(self, i: int, job: Job) -> None:
        self._ids += 1
        worker = self.slots[i]
        worker.job, worker.job_id = job, self._ids
        try:
            worker.conn.send((self._ids, job.req))
        except (OSError, ValueError):  # it died while idle
            self._replace(i, "worker process died before scoring")

    def _collect(self, worker: _Worker) -> None:
        if worker.job is None:
            return
        try:
            if worker.conn.poll():
                job_id, result = worker.conn.recv()
                if job_id == worker.job_id:
                    job, worker.job = worker.job, None
                    self._answer(job, result)
                return
        except (EOFError, OSError):
            pass
        if not worker.proc.is_alive() or worker.conn.closed:
            worker.proc.join(timeout=1.0)
            self._replace(next(i for i, w in enumerate(self.slots) if w is worker), f"worker process died (exit code {worker.proc.exitcode}) "
                                                    "while scoring this request; it was replaced")

    def _replace(self, i: int, message: str) -> None:
        from opforge.agents.batch.local import stop_tree

        worker = self.slots[i]
        if worker.proc.is_alive():
            stop_tree(worker.proc.pid)
        worker.conn.close()
        if worker.job is not None:
            self._answer(worker.job, error_result(worker.job.req, message))
        self.replaced += 1
        if time.monotonic() - worker.started < RESTART_PAUSE_S:
            time.sleep(RESTART_PAUSE_S)
        self.slots[i] = self._start()

    def close(self) -> None:
        """Answer what waits, ask idle workers to stop (their Scorers close their sandboxes), stop the
        busy ones with their process trees (SIGTERM unwinds them the same way), all at once."""
        from opforge.agents.batch.local import stop_tree

        self._stop_pending()
        self.thread.join(timeout=5.0)
        for worker in self.slots:
            try:
                worker.conn.send(None)
            except (OSError, ValueError):
                pass
        busy = [w for w in self.slots if w.job is not None]
        stoppers = [threading.Thread(target=stop_tree, args=(w.proc.pid,)) for w in busy if w.proc.is_alive()]
        for thread in stoppers:
            thread.start()
        deadline = time.monotonic() + GRACE_S
        for worker in self.slots:
            worker.proc.join(timeout=max(0.1, deadline - time.monotonic()))
        for thread in stoppers:
            thread.join()
        for worker in self.slots:
            if worker.proc.is_alive():
                stop_tree(worker.proc.pid)
            if worker.job is not None:
                self._answer(worker.job, error_result(worker.job.req, STOPPING))
            worker.conn.close()


# -- Ray -------------------------------------------------------------------------------------------


class RayRewardPool(_Queue):
    executor = "ray"

    def __init__(self, workers: int | None, capacity: int, scorer_options: dict, request_timeout_s: float,
                 address: str | None) -> None:
        from opforge.agents.batch.raypool import RayPool

        self.ray = RayPool(address, workers, scorer_options.get("device") or "cpu", local_cpus=workers)
        super().__init__(self.ray.jobs, capacity)
        self.scorer_options, self.request_timeout_s = scorer_options, request_timeout_s
        self.remote = self.ray.remote(ray_score)
        self.thread = threading.Thread(target=self._loop, name="opforge-reward-ray", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        def done(job: Job, ref, _elapsed: float) -> None:
            taken.discard(job)
            result, error = self.ray.get(ref)
            self._answer(job, result if error is None else error_result(job.req, f"{error}; the request was not scored"))

        def cut(job: Job, _elapsed: float, why: str) -> None:
            taken.discard(job)
            message = STOPPING if why == "stopped" else f"request time limit ({self.request_timeout_s:g} s) exceeded"
            self._answer(job, error_result(job.req, message))

        taken: set[Job] = set()  # in flight on Ray: answered by done or cut, or here if Ray itself fails

        def take() -> Job | None:
            job = self._take()
            if job is not None:
                taken.add(job)
            return job

        try:
            self.ray.drive(take, lambda job: self.remote.remote(self.scorer_options, job.req), done, cut,
                           self.request_timeout_s, more=lambda: self._idle_wait(0.2))
        except Exception as exc:  # Ray itself failed (the cluster went away): no request may wait forever
            print(f"opforge reward-server: Ray dispatch stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
            self._stop_pending()
            for job in taken:
                if not job.done.is_set():
                    self._answer(job, error_result(job.req, f"Ray dispatch stopped: {type(exc).__name__}: {exc}"))

    def close(self) -> None:
        self._stop_pending()
        self.ray.stop()
        self.thread.join(timeout=10.0)
        self.ray.close()
