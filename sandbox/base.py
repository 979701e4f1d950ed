"""One interface for running a job on untrusted code: `Sandbox.run(job) -> JobResult`, which never raises.

A job is `python -m harness.worker /job/job.json`: its files are staged in a fresh host directory
that the runtime exposes as the job directory (the only place a job may write besides its scratch
space), and the worker leaves `result.json` there.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

STDIO_CAP = 64 * 1024  # bytes of stdout/stderr kept from a job (head and tail); a candidate may print gigabytes
SANDBOX_UID_BASE = 200_000  # jobs run as a fresh unprivileged uid, never as the caller


def sandbox_uid() -> int:
    """A uid of its own per sandbox: RLIMIT_NPROC counts per uid, so a fork bomb in one job cannot
    starve the processes of another job running at the same time."""
    return SANDBOX_UID_BASE + secrets.randbelow(800_000)
# The only variables a job sees: no API keys, no home, no registry location.
PASSED_ENV = ("LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "TRITON_DEFAULT_FP_FUSION")
CAUSES = ("timeout", "oom", "killed", "crashed", "denied")


@dataclass(frozen=True)
class Job:
    """Run the worker on `payload`, with `files` (name in the job dir -> host path) copied in."""

    payload: dict
    files: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 600.0
    # Files the job writes into its directory that the caller reads back: name -> most bytes accepted.
    # Anything larger, not a regular file, or a link is refused unread (JobResult.output_errors).
    outputs: dict[str, int] = field(default_factory=dict)


@dataclass
class JobResult:
    exit_code: int | None
    payload: dict | None
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0
    cause: str | None = None  # one of CAUSES when the job did not leave a result
    runtime: str = "none"
    outputs: dict[str, bytes] = field(default_factory=dict)  # the Job's declared outputs that were readable
    output_errors: dict[str, str] = field(default_factory=dict)  # why a declared output was refused

    @property
    def ok(self) -> bool:
        return self.cause is None and self.payload is not None and "error" not in self.payload


class Sandbox(Protocol):
    """`run` never raises; `close` releases what a runtime keeps warm between jobs (a container)."""

    name: str

    def run(self, job: Job) -> JobResult: ...

    def close(self) -> None: ...


def job_env(scratch: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a job: a few locale/GPU variables, scratch as home and temp."""
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    env.update(HOME=scratch, TMPDIR=scratch, USER="opforge", LOGNAME="opforge", PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0",
               TRITON_CACHE_DIR=f"{scratch}/.triton", PATH="/usr/local/bin:/usr/bin:/bin")
    env.update(extra or {})
    return env


class StagedJob:
    """A fresh host directory holding job.json and the job's files, seen as `inside` by the job."""

    def __init__(self, job: Job, inside: str | None = None, owner: int | None = None,
                 parent: Path | None = None, inside_parent: str | None = None) -> None:
        """`inside`: the job dir's path as the job sees it; or, for jobs staged under a shared
        `parent` directory, `inside_parent` is where the job sees that parent."""
        self.host = Path(tempfile.mkdtemp(prefix="opforge-job-", dir=parent))
        self.inside = f"{inside_parent}/{self.host.name}" if inside_parent else inside or str(self.host)
        payload = dict(job.payload)
        for name, host_path in job.files.items():
            shutil.copyfile(host_path, self.host / name)
            payload[f"{Path(name).stem}_path"] = f"{self.inside}/{name}"
        for name in job.outputs:  # where the worker writes each declared output
            payload[f"{Path(name).stem}_path"] = f"{self.inside}/{name}"
        payload["result_path"] = f"{self.inside}/result.json"
        (self.host / "job.json").write_text(json.dumps(payload))
        if owner is not None:  # the sandboxed user must be able to write its result here
            for path in [self.host, *self.host.iterdir()]:
                os.chown(path, owner, owner)

    @property
    def job_file(self) -> str:
        return f"{self.inside}/job.json"

    def result(self) -> tuple[dict | None, bool]:
        """(payload, unreadable): a result.json that is not JSON, too large, or not a regular file
        means the job was tampered with or died mid-write."""
        data, problem = read_capped(self.host / "result.json", RESULT_CAP)
        if data is None:
            return None, problem != "missing"
        try:
            return json.loads(data.decode("utf-8", "replace")), False
        except ValueError:
            return None, True

    def outputs(self, caps: dict[str, int]) -> tuple[dict[str, bytes], dict[str, str]]:
        """The declared output files, each read only when it is a regular file within its cap."""
        found, errors = {}, {}
        for name, cap in caps.items():
            data, problem = read_capped(self.host / name, cap)
            if data is not None:
                found[name] = data
            elif problem != "missing":
                errors[name] = problem
        return found, errors

    def cleanup(self) -> None:
        shutil.rmtree(self.host, ignore_errors=True)


RESULT_CAP = 8 << 20  # result.json holds a verdict's data, never tensors


def read_capped(path: Path, cap: int) -> tuple[bytes | None, str]:
    """(bytes, "") for a regular file of at most `cap` bytes; else (None, why). Never follows a
    link and checks the size before reading, so a job cannot point the reader at a host file or
    make it read a sparse terabyte."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, "missing"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file"
        if info.st_size > cap:
            return None, f"too large: {info.st_size} bytes (at most {cap})"
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(cap + 1)
        return (data, "") if len(data) <= cap else (None, f"too large: over {cap} bytes")
    finally:
        os.close(fd)


class CappedReader(threading.Thread):
    """Drains a pipe, keeping the first and last STDIO_CAP/2 bytes, so a flood costs no memory or disk."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.stream, self.head, self.tail, self.total = stream, bytearray(), bytearray(), 0

    def run(self) -> None:
        half = STDIO_CAP // 2
        for chunk in iter(lambda: self.stream.read(65536), b""):
            self.total += len(chunk)
            if len(self.head) < half:
                take = half - len(self.head)
                self.head += chunk[:take]
                chunk = chunk[take:]
            self.tail = (self.tail + chunk)[-half:]

    def text(self) -> str:
        self.join(timeout=5)
        cut = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {cut} bytes cut ...]\n" if cut > 0 else ""
        return (bytes(self.head) + middle.encode() + bytes(self.tail)).decode("utf-8", "replace")


def cause_of(exit_code: int | None, payload: dict | None, unreadable: bool, timed_out: bool, oom: bool) -> str | None:
    """Why a job left no usable result, in the words the verdict uses."""
    if timed_out:
        return "timeout"
    if oom:
        return "oom"
    if payload is not None:
        return None
    if unreadable:
        return "crashed"
    if exit_code is not None and exit_code < 0:
        return "oom" if exit_code == -9 else "killed"
    return "crashed"
