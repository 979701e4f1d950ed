"""The `none` runtime: a child process in its own session, a time limit, a scrubbed environment
and a private scratch directory. It does NOT isolate the network, the file system or other
processes; it exists for debugging and as the base the isolating runtimes build on."""
from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import time
from pathlib import Path

from sandbox.base import Job, JobResult, new_scratch, read_capped, scrubbed_env, stage_job, worker_argv

FILE_SIZE_CAP = 1 << 30  # a job cannot write a file over 1 GiB (stdout floods included)


def _limits() -> None:  # runs in the child between fork and exec
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_CAP, FILE_SIZE_CAP))


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class ProcessSandbox:
    name = "none"

    def run(self, job: Job) -> JobResult:
        scratch = new_scratch()
        try:
            return self._run(job, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _run(self, job: Job, scratch: Path) -> JobResult:
        stage_job(job, scratch)
        out_path, err_path = scratch / "stdout.txt", scratch / "stderr.txt"
        started = time.perf_counter()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(worker_argv(), cwd=scratch, env=self.env(scratch), stdout=out, stderr=err,
                                    stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_limits)
        cause, status, usage = self._wait(proc.pid, started + job.timeout_s)
        _kill_group(proc.pid)  # reap whatever the job left running in its session
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        return self._result(job, scratch, code, cause, wall, usage, out_path, err_path)

    @staticmethod
    def _wait(pid: int, deadline: float) -> tuple[str | None, int, resource.struct_rusage]:
        """wait4 with a deadline, so the job's CPU time and peak memory come back too."""
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return None, status, usage
            if time.perf_counter() > deadline:
                _kill_group(pid)
                _done, status, usage = os.wait4(pid, 0)
                return "timeout", status, usage
            time.sleep(0.02)

    def env(self, scratch: Path) -> dict[str, str]:
        return scrubbed_env(scratch)

    def _result(self, job, scratch, code, cause, wall, usage, out_path, err_path) -> JobResult:
        import json

        result_file = scratch / "result.json"
        payload = None
        if result_file.exists():
            try:
                payload = json.loads(result_file.read_text())
            except ValueError:
                cause = cause or "crashed"
        if cause is None and payload is None:
            cause = "oom" if code == -signal.SIGKILL else ("killed" if code and code < 0 else "crashed")
        cpu = (usage.ru_utime + usage.ru_stime) if usage else 0.0
        rss = (usage.ru_maxrss / 1024) if usage else 0.0
        return JobResult(exit_code=code, payload=payload, stdout=read_capped(out_path),
                         stderr=read_capped(err_path), wall_s=wall, cpu_s=cpu, peak_rss_mb=rss,
                         cause=cause, runtime=self.name)
