"""Running a job as a child process: the `none` runtime, and the process runner the jail builds on.

`none` is a child process in its own session with a time limit, a scrubbed environment and a
private scratch directory. It does NOT isolate the network, the file system or other processes;
it exists for debugging and must be asked for by name."""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from typing import Callable

from sandbox.base import CappedReader, Job, JobResult, StagedJob, cause_of, job_env

WORKER = ["-m", "harness.worker"]


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _wait(pid: int, deadline: float) -> tuple[bool, int, resource.struct_rusage]:
    """wait4 with a deadline, so the job's CPU time and peak memory come back too."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return False, status, usage
        if time.perf_counter() > deadline:
            _kill_group(pid)
            _done, status, usage = os.wait4(pid, 0)
            return True, status, usage
        time.sleep(0.02)


def run_process(argv: list[str], staged: StagedJob, env: dict[str, str], timeout_s: float, runtime: str,
                cwd: str | None = None, preexec: Callable[[], None] | None = None,
                outputs: dict[str, int] | None = None) -> JobResult:
    """Start argv in a new session, drain its output through capped readers, kill the whole
    session at the deadline, and read the result the worker left in the job directory."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec)
    readers = [CappedReader(proc.stdout), CappedReader(proc.stderr)]
    for reader in readers:
        reader.start()
    timed_out, status, usage = _wait(proc.pid, started + timeout_s)
    _kill_group(proc.pid)  # whatever the job left running in its session goes too
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    stdout, stderr = (r.text() for r in readers)
    payload, unreadable = staged.result()
    files, file_errors = staged.outputs(outputs or {})
    reported = (payload or {}).get("usage", {})  # a jailed worker is not our direct child: it reports itself
    return JobResult(exit_code=code, payload=payload, stdout=stdout, stderr=stderr, wall_s=wall,
                     cpu_s=max(usage.ru_utime + usage.ru_stime, reported.get("cpu_s", 0.0)),
                     peak_rss_mb=max(usage.ru_maxrss / 1024, reported.get("max_rss_mb", 0.0)),
                     cause=cause_of(code, payload, unreadable, timed_out, _oom(payload)), runtime=runtime,
                     outputs=files, output_errors=file_errors)


def _oom(payload: dict | None) -> bool:
    return bool(payload) and str(payload.get("error", "")).startswith("MemoryError")


def _core_limits() -> None:  # between fork and exec
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class ProcessSandbox:
    """Nothing stays warm: each job is a fresh process."""

    name = "none"

    def run(self, job: Job) -> JobResult:
        staged = StagedJob(job)
        try:
            scratch = staged.host / "scratch"
            scratch.mkdir()
            return run_process([sys.executable, *WORKER, staged.job_file], staged, job_env(str(scratch)),
                               job.timeout_s, self.name, cwd=str(scratch), preexec=_core_limits,
                               outputs=job.outputs)
        finally:
            staged.cleanup()

    def close(self) -> None:
        pass
