"""Ray for clusters: one Ray task per op, a GPU requested per task when the target is a GPU.

A task runs the op's loop against a throwaway registry on the worker's own disk and returns plain
data (spec, run, candidates with their verdicts, LLM calls, promotions); the driver imports it into
the real registry in one transaction. No SQLite file is shared over the network. Stage events come
back through a Ray queue actor for the progress view. A task has no checkpoint the driver can reach,
so an interrupted Ray batch resumes per op: finished ops are in the registry and are skipped."""
from __future__ import annotations

import tempfile
import time
from collections import deque
from dataclasses import replace
from pathlib import Path

from opforge.agents.batch.raypool import RayPool
from opforge.agents.batch.worker import close_failed, outcome, run_op
from opforge.agents.config import RunOptions
from opforge.registry import Registry, RegistryError


def ray_op(task, options: RunOptions, spec_source: str, events) -> dict:
    """The Ray task: run one op in a scratch directory; return its outcome and exported run."""
    started = time.monotonic()

    def emit(event: dict) -> None:
        events.put_nowait((task.op, event))

    with tempfile.TemporaryDirectory(prefix="opforge-ray-") as scratch:
        spec = Path(scratch) / Path(task.spec_path).name  # same stem: same op name as on the driver
        spec.write_text(spec_source, encoding="utf-8")
        with Registry(Path(scratch) / "opforge.registry.db") as reg:
            result = run_op(replace(task, spec_path=str(spec), action="run"), options, reg, emit)
            bundle = None
            if result["run_key"]:
                close_failed(reg, result["run_key"], result["error"] or "the run stopped unfinished")
                bundle = reg.export_run(result["run_key"])
    return {"result": result | {"time_s": round(time.monotonic() - started, 2)}, "bundle": bundle}


def probe_hardware(force_cpu: bool) -> str:
    from opforge.harness.hardware import detect

    return detect(force_cpu=force_cpu).fingerprint


class RayExecutor:
    resumes = False

    def __init__(self, registry: Registry, address: str | None, jobs: int | None, op_timeout_s: float,
                 device: str | None) -> None:
        self.pool, self.registry, self.op_timeout_s = RayPool(address, jobs, device), registry, op_timeout_s
        self.ray, self.jobs, self.force_cpu = self.pool.ray, self.pool.jobs, device == "cpu"

    def hardware(self) -> str:
        """The workers' hardware fingerprint (asked of one, with the same resources as an op)."""
        return self.ray.get(self.pool.remote(probe_hardware).remote(self.force_cpu))

    def close(self) -> None:
        self.pool.close()

    def run(self, tasks: list, options: RunOptions, on_event, on_timeout) -> dict[str, dict]:
        from ray.util.queue import Queue

        events = Queue(actor_options={"num_cpus": 0})
        remote, pending, results = self.pool.remote(ray_op), deque(tasks), {}

        def submit(task):
            source = Path(task.spec_path).read_text(encoding="utf-8")
            on_event({"kind": "start", "op": task.op, "action": "run"})
            return remote.remote(task, options, source, events)

        def finish(task, result: dict) -> None:
            results[task.op] = result
            on_event({"kind": "done", "op": task.op, "result": result})

        def cut(task, elapsed: float, why: str) -> None:
            message = (f"op time limit ({self.op_timeout_s:g} s) exceeded; Ray task cancelled" if why == "timeout"
                       else "the batch stopped; Ray task cancelled")
            on_timeout(task, None, message)
            finish(task, outcome(task.op, status="timeout", error=message, time_s=elapsed))

        try:
            self.pool.drive(lambda: pending.popleft() if pending else None, submit,
                            lambda task, ref, elapsed: finish(task, self._collect(ref, task, elapsed)), cut,
                            self.op_timeout_s, tick=lambda: self._drain(events, on_event))
        finally:
            self.ray.kill(events.actor)
        return results

    def _drain(self, events, on_event) -> None:
        waiting = events.size()
        if waiting:
            for op, event in events.get_nowait_batch(waiting):
                on_event({"kind": "progress", "op": op} | event)

    def _collect(self, ref, task, elapsed: float) -> dict:
        payload, error = self.pool.get(ref)
        if error is not None:  # the task or its worker died
            return outcome(task.op, error=error, time_s=elapsed)
        result = payload["result"] | {"time_s": elapsed}
        if payload["bundle"] is not None:
            try:
                run = self.registry.import_run(payload["bundle"], spec_path=task.spec_path)
            except RegistryError as exc:
                return result | {"status": "error", "error": f"import into the registry failed: {exc}"}
            result |= {"best_candidate_id": run.best_candidate_id}  # ids of this registry, not the worker's
        return result
