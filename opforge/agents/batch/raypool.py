"""The Ray side every Ray executor shares (`opforge batch --executor ray`, `opforge reward-server
--executor ray`): start a local Ray instance or connect to a cluster (one line if it cannot), turn
the cluster's resources into slots, and keep at most `jobs` tasks in flight with ray.wait, cancelling
a task past its time limit, and every task in flight on an interrupt.

The pool knows nothing of what a task does: `drive` takes items from `take()`, submits each with
`submit(item)`, and hands each back to `done(item, ref, elapsed_s)`, or to `cut(item, elapsed_s, why)`
when it was cancelled: `why` is "timeout" (past its time limit) or "stopped" (the pool was stopped)."""
from __future__ import annotations

import time
from typing import Callable

from opforge.harness.errors import OpforgeError

POLL_S = 0.2  # how long one ray.wait blocks: the loop's tick (events, time limits, new items)


def import_ray():
    try:
        import ray
    except ImportError:
        raise OpforgeError("--executor ray needs Ray: pip install 'opforge[ray]'") from None
    return ray


class RayPool:
    """A Ray instance (started here and shut down by close(), or one already running) and its slots:
    one CPU per task, or one GPU per task when the target is a GPU and the cluster has one."""

    def __init__(self, address: str | None, jobs: int | None, device: str | None,
                 local_cpus: int | None = None) -> None:
        self.ray = import_ray()
        self._owns = not self.ray.is_initialized()
        if self._owns:
            extra = {"num_cpus": local_cpus} if local_cpus and not address else {}
            try:
                self.ray.init(address=address, include_dashboard=False, log_to_driver=False, **extra)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise OpforgeError(f"cannot reach a Ray cluster at {address or 'a new local instance'}: {exc}") from None
        resources = self.ray.cluster_resources()
        self.gpus = 1 if device != "cpu" and resources.get("GPU", 0) >= 1 else 0
        slots = int(resources.get("GPU", 0)) if self.gpus else int(resources.get("CPU", 1))
        self.jobs = jobs or max(1, slots)
        self._stopping = False

    def remote(self, fn):
        """`fn` as a Ray task with this pool's resources, never retried (a retry would rerun a
        candidate that killed its worker)."""
        return self.ray.remote(fn).options(num_cpus=1, num_gpus=self.gpus, max_retries=0)

    def get(self, ref) -> tuple[object, str | None]:
        """(value, None), or (None, the one-line reason) when the task or its worker died."""
        try:
            return self.ray.get(ref), None
        except self.ray.exceptions.RayError as exc:
            lines = str(exc).strip().splitlines() or [type(exc).__name__]
            return None, f"Ray task failed: {lines[-1]}"

    def stop(self) -> None:
        """Make a running `drive` cancel what is in flight and return (from another thread)."""
        self._stopping = True

    def close(self) -> None:
        self._stopping = True
        if self._owns and self.ray.is_initialized():
            self.ray.shutdown()

    def drive(self, take: Callable[[], object | None], submit: Callable[[object], object],
              done: Callable[[object, object, float], None], cut: Callable[[object, float, str], None],
              timeout_s: float, more: Callable[[], bool] = lambda: False, tick: Callable[[], None] = lambda: None) -> None:
        """Run items until `take()` has none left, nothing is in flight and `more()` is false (a
        server's `more` waits a little for new items and says whether it still runs). A task past
        `timeout_s` is cancelled (its worker process killed); KeyboardInterrupt cancels every task in
        flight and propagates."""
        inflight: dict = {}
        try:
            while not self._stopping:
                while len(inflight) < self.jobs:
                    item = take()
                    if item is None:
                        break
                    inflight[submit(item)] = (item, time.monotonic())
                if not inflight:
                    if more():
                        continue
                    return
                ready, _ = self.ray.wait(list(inflight), num_returns=1, timeout=POLL_S)
                tick()
                for ref in ready:
                    item, started = inflight.pop(ref)
                    done(item, ref, round(time.monotonic() - started, 2))
                for ref, (item, started) in list(inflight.items()):
                    if time.monotonic() - started > timeout_s:
                        self.ray.cancel(ref, force=True)
                        del inflight[ref]
                        cut(item, round(time.monotonic() - started, 2), "timeout")
            for ref, (item, started) in list(inflight.items()):
                self.ray.cancel(ref, force=True)
                cut(item, round(time.monotonic() - started, 2), "stopped")
        except KeyboardInterrupt:
            for ref in inflight:
                self.ray.cancel(ref, force=True)
            raise
