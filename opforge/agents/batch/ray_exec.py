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

from opforge.agents.batch.worker import close_failed, outcome, run_op
from opforge.agents.config import RunOptions
from opforge.harness.errors import OpforgeError
from opforge.registry import Registry, RegistryError


def _ray():
    try:
        import ray
    except ImportError:
        raise OpforgeError("--executor ray needs Ray: pip install 'opforge[ray]'") from None
    return ray


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
        self.ray, self.registry, self.op_timeout_s = _ray(), registry, op_timeout_s
        self._owns = not self.ray.is_initialized()
        if self._owns:
            try:
                self.ray.init(address=address, include_dashboard=False, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise OpforgeError(f"cannot reach a Ray cluster at {address or 'a new local instance'}: {exc}") from None
        resources = self.ray.cluster_resources()
        self.gpus = 1 if device != "cpu" and resources.get("GPU", 0) >= 1 else 0
        self.force_cpu = device == "cpu"
        slots = int(resources.get("GPU", 0)) if self.gpus else int(resources.get("CPU", 1))
        self.jobs = jobs or max(1, slots)

    def _remote(self, fn):
        return self.ray.remote(fn).options(num_cpus=1, num_gpus=self.gpus, max_retries=0)

    def hardware(self) -> str:
        """The workers' hardware fingerprint (asked of one, with the same resources as an op)."""
        return self.ray.get(self._remote(probe_hardware).remote(self.force_cpu))

    def close(self) -> None:
        if self._owns and self.ray.is_initialized():
            self.ray.shutdown()

    def run(self, tasks: list, options: RunOptions, on_event, on_timeout) -> dict[str, dict]:
        from ray.util.queue import Queue

        events = Queue(actor_options={"num_cpus": 0})
        remote, pending, inflight, results = self._remote(ray_op), deque(tasks), {}, {}
        try:
            while pending or inflight:
                while pending and len(inflight) < self.jobs:
                    task = pending.popleft()
                    source = Path(task.spec_path).read_text(encoding="utf-8")
                    inflight[remote.remote(task, options, source, events)] = (task, time.monotonic())
                    on_event({"kind": "start", "op": task.op, "action": "run"})
                ready, _ = self.ray.wait(list(inflight), num_returns=1, timeout=0.2)
                self._drain(events, on_event)
                for ref in ready:
                    task, started = inflight.pop(ref)
                    results[task.op] = self._collect(ref, task, started)
                    on_event({"kind": "done", "op": task.op, "result": results[task.op]})
                for ref, (task, started) in list(inflight.items()):
                    if time.monotonic() - started > self.op_timeout_s:
                        self.ray.cancel(ref, force=True)
                        del inflight[ref]
                        results[task.op] = self._timed_out(task, started, on_timeout)
                        on_event({"kind": "done", "op": task.op, "result": results[task.op]})
        except KeyboardInterrupt:
            for ref in inflight:
                self.ray.cancel(ref, force=True)
            raise
        finally:
            self.ray.kill(events.actor)
        return results

    def _drain(self, events, on_event) -> None:
        waiting = events.size()
        if waiting:
            for op, event in events.get_nowait_batch(waiting):
                on_event({"kind": "progress", "op": op} | event)

    def _collect(self, ref, task, started: float) -> dict:
        elapsed = round(time.monotonic() - started, 2)
        try:
            payload = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:  # the task or its worker died
            return outcome(task.op, error=f"Ray task failed: {str(exc).strip().splitlines()[-1]}", time_s=elapsed)
        result = payload["result"] | {"time_s": elapsed}
        if payload["bundle"] is not None:
            try:
                run = self.registry.import_run(payload["bundle"], spec_path=task.spec_path)
            except RegistryError as exc:
                return result | {"status": "error", "error": f"import into the registry failed: {exc}"}
            result |= {"best_candidate_id": run.best_candidate_id}  # ids of this registry, not the worker's
        return result

    def _timed_out(self, task, started: float, on_timeout) -> dict:
        message = f"op time limit ({self.op_timeout_s:g} s) exceeded; Ray task cancelled"
        on_timeout(task, None, message)
        return outcome(task.op, status="timeout", error=message, time_s=round(time.monotonic() - started, 2))
