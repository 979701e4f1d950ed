"""Which process drives a run: an advisory flock per run (`<registry dir>/batch-locks/<run>.lock`),
held by whoever drives the loop (`opforge run`, a resume, a batch worker, the workbench's
background runs), so nobody resumes a run that is alive, only one whose process died: the kernel
drops a flock with its holder, SIGKILL included. Within one process the lock is re-entrant (a
batch worker holds it and then calls resume_run). The file holds its holder's pid, so that
`opforge cancel` can stop the process driving a run."""
from __future__ import annotations

import fcntl
import os
import signal
import threading
from pathlib import Path

_held: dict[str, list] = {}  # lock path -> [fd, holders] for the locks this process holds
_guard = threading.Lock()


class RunLock:
    def __init__(self, db_path, run_key: str) -> None:
        self.path = Path(db_path).parent / "batch-locks" / f"{run_key}.lock"
        self.mine = False

    def acquire(self, record: bool = True) -> bool:
        key = str(self.path)
        with _guard:
            if key in _held:
                _held[key][1] += 1
                self.mine = True
                return True
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            if record:  # who to stop (stop_holder): a driver, never a process that only looked
                os.ftruncate(fd, 0)
                os.write(fd, str(os.getpid()).encode())
            _held[key] = [fd, 1]
            self.mine = True
            return True

    def release(self) -> None:
        key = str(self.path)
        with _guard:
            if not self.mine or key not in _held:
                return
            self.mine = False
            _held[key][1] -= 1
            if _held[key][1] == 0:
                os.close(_held.pop(key)[0])  # closing drops the flock

    def held_elsewhere(self) -> bool:
        """Whether another process drives the run (this one holding it does not count)."""
        with _guard:
            if str(self.path) in _held:
                return False
        if not self.acquire(record=False):
            return True
        self.release()
        return False

    def stop_holder(self) -> int | None:
        """SIGTERM the process of this machine that holds the lock (it unwinds and stops its job,
        sandbox/interrupt.py); its pid, or None when nobody else holds it."""
        if not self.held_elsewhere():
            return None
        try:
            pid = int(self.path.read_text().strip())
            if pid == os.getpid():  # a lock this process held once, not the driver's
                return None
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError):  # released meanwhile, or written by an older version
            return None
        return pid
