"""Running a job as a child process: the `none` runtime, and the process runner the jail builds on.

`none` is a child process in its own session with a time limit, a scrubbed environment and a
private scratch directory. It does NOT isolate the network, the file system or other processes;
it exists for debugging and must be asked for by name."""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from opforge.sandbox import interrupt
from opforge.sandbox.base import CappedReader, Job, JobResult, StagedJob, job_env

# Isolated mode (-I): neither the working directory nor the script's is on sys.path, PYTHON*
# variables and the user site are ignored, so nothing a job wrote (a planted package in its
# scratch) can stand in for what the worker imports. -B: no bytecode written (-I ignores
# PYTHONDONTWRITEBYTECODE). Hash randomisation stays on (PYTHONHASHSEED is ignored too): a worker
# must not depend on str hashes.
WORKER = ["-I", "-B", "-m"]


def worker_argv(python: str, job: Job, job_file: str) -> list[str]:
    """The worker's command line in every runtime: `python -I -B -m <job.worker> JOB_FILE`. WORKER
    is read at each call: tests replace it with `-c CODE`, which then finds the job file last in sys.argv."""
    return [python, *WORKER, job.worker, job_file]


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, whatever session, process group or PID namespace it moved to (a
    worker's phase is in a session and namespace of its own: a group kill misses it)."""
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text(encoding="ascii", errors="replace")
        except OSError:  # exited while we looked
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the command name may hold spaces and ')'
        children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL the process group `pid` and every process below it, found before any of them dies
    (an orphan is re-parented out of the tree at once)."""
    tree = descendants(pid)
    kill_group(pid)
    for child in tree:
        try:
            os.kill(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def wait_until(pid: int, deadline: float) -> tuple[bool, int, resource.struct_rusage]:
    """wait4 with a deadline (past it, the process group `pid` is killed): (timed out, status,
    rusage), so the CPU time and peak memory come back too. The worker waits for its phases so."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return False, status, usage
        if time.perf_counter() > deadline:
            kill_group(pid)
            _done, status, usage = os.wait4(pid, 0)
            return True, status, usage
        interrupt.check()
        time.sleep(0.02)


def run_process(argv: list[str], staged: StagedJob, job: Job, env: dict[str, str], runtime: str,
                cwd: str | None = None, preexec: Callable[[], None] | None = None) -> JobResult:
    """Start argv in a new session, drain its output through capped readers, kill the whole
    session at the deadline, and read the result the worker left in the job directory."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec)
    readers = [CappedReader(proc.stdout), CappedReader(proc.stderr)]
    for reader in readers:
        reader.start()
    try:
        timed_out, status, usage = wait_until(proc.pid, started + job.timeout_s)
    except BaseException:  # interrupted (sandbox/interrupt.py): the job and all it started go with its caller
        kill_tree(proc.pid)
        proc.wait()
        raise
    kill_group(proc.pid)  # whatever the job left running in its session goes too
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    stdout, stderr = (r.text() for r in readers)
    return staged.job_result(job, runtime, code, stdout, stderr, wall, timed_out=timed_out,
                             cpu_s=usage.ru_utime + usage.ru_stime, peak_rss_mb=usage.ru_maxrss / 1024)


def _core_limits() -> None:  # between fork and exec
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: the worker dies with its caller, SIGKILL included


_LIBC = ctypes.CDLL(None)


class ProcessSandbox:
    """Nothing stays warm: each job is a fresh process. Its job directory is not size-capped."""

    name = "none"

    def run(self, job: Job) -> JobResult:
        staged = StagedJob(job)
        try:
            scratch = staged.host / "scratch"
            scratch.mkdir()
            return run_process(worker_argv(sys.executable, job, staged.job_file), staged, job, job_env(str(scratch)),
                               self.name, cwd=str(scratch), preexec=_core_limits)
        finally:
            staged.cleanup()

    def close(self) -> None:
        pass
