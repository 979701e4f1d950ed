"""One interface for running a job on untrusted code: `Sandbox.run(job) -> JobResult`, which never raises.

A job is `python -I -B -m WORKER /job/job.json`, where the caller names the worker module and the
host paths it imports from (bound read-only); the sandbox knows nothing of what the worker does. Its
files are staged in a fresh host directory that the runtime exposes as the job directory (the only
place a job may write besides its scratch space; a tmpfs sized for the job where the runtime can
mount one), and the worker leaves `result.json` there. Whatever the job wrote is read back only
through `read_capped`.
"""
from __future__ import annotations

import errno
import json
import os
import re
import secrets
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Protocol

from opforge.sandbox import mounts

STDIO_CAP = 64 * 1024  # bytes of stdout/stderr kept from a job (head and tail); a candidate may print gigabytes
SANDBOX_UID_BASE = 200_000  # jobs run as a fresh unprivileged uid, never as the caller


def sandbox_uid() -> int:
    """A uid of its own per sandbox: RLIMIT_NPROC counts per uid, so a fork bomb in one job cannot
    starve the processes of another job running at the same time."""
    return SANDBOX_UID_BASE + secrets.randbelow(800_000)
# The only variables a job sees: no API keys, no home, no registry location.
PASSED_ENV = ("LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "TRITON_DEFAULT_FP_FUSION",
              # CANN's set_env.sh: where the toolkit is, and which NPUs a job may use
              "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH",
              "ASCEND_RT_VISIBLE_DEVICES",
              # where triton-ascend is installed when not in the venv (backends/triton_ascend/toolchain.py):
              # the worker must find the prefix the host found and mounted
              "OPFORGE_ASCEND_PREFIX")
CAUSES = ("timeout", "oom", "killed", "crashed", "denied")
MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


@dataclass(frozen=True)
class Job:
    """Run the module `worker` on `payload`, with `files` (name in the job dir -> host path) copied in."""

    payload: dict
    files: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 600.0
    # Files the job writes into its directory that the caller reads back: name -> most bytes accepted.
    # Anything larger, not a regular file, or a link is refused unread (JobResult.output_errors).
    outputs: dict[str, int] = field(default_factory=dict)
    worker: str = field(kw_only=True)  # the module the job runs (`python -m`), named by the caller
    # Host paths the worker imports from (its package, its libraries), bound read-only where the
    # runtime builds a root of its own; the system and the running Python are always exposed.
    mounts: tuple[str, ...] = field(default=(), kw_only=True)
    # Modules the worker imports first whatever the job (torch), which a runtime may have imported
    # ahead in a warm interpreter the job's process is forked from (the jail: sandbox/warm.py); ()
    # for a worker that must set up its process before them (a backend's own numpy first on sys.path).
    preload: tuple[str, ...] = field(default=(), kw_only=True)
    # Called in a thread of its own while the job runs, with the job's host directory and an event set
    # once the job is over: the caller reading what the job leaves on its way (harness/early.py).
    watch: Callable[[Path, threading.Event], None] | None = field(default=None, kw_only=True, compare=False)

    def __post_init__(self) -> None:
        if not MODULE_NAME.fullmatch(self.worker):
            raise ValueError(f"Job.worker must be a module name, not {self.worker!r}")
        if not all(os.path.isabs(path) for path in self.mounts):
            raise ValueError(f"Job.mounts must be absolute paths: {self.mounts}")


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
    warnings: list[str] = field(default_factory=list)  # an isolation the runtime could not give this job

    @property
    def ok(self) -> bool:
        return self.cause is None and self.payload is not None and "error" not in self.payload


class Sandbox(Protocol):
    """`run` never raises; `close` releases what a runtime keeps warm between jobs (a container)."""

    name: str

    def run(self, job: Job) -> JobResult: ...

    def close(self) -> None: ...


def job_env(scratch: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a job: a few locale/GPU variables, scratch as home and temp. No
    PYTHON* variables: the worker runs in isolated mode (WORKER's -I), which ignores them all."""
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    if "ASCEND_HOME_PATH" in env and "LD_LIBRARY_PATH" in os.environ:  # CANN's runtime libraries, as set_env.sh set them
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    env.update(HOME=scratch, TMPDIR=scratch, USER="opforge", LOGNAME="opforge",
               TRITON_CACHE_DIR=f"{scratch}/.triton", PATH="/usr/local/bin:/usr/bin:/bin",
               # the interpreter's tl.dot is a small BLAS call per tile: a thread pool per job only
               # oversubscribes the cores the judge and other jobs share (30x slower under load)
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.update(extra or {})
    return env


RESULT_CAP = 8 << 20  # result.json holds a verdict's data, never tensors
JOB_DIR_SLACK = 1 << 20  # on top of the files' bytes: a 4 KiB page per small file, directory entries


def job_dir_bytes(job: Job, job_json_bytes: int) -> int:
    """The size cap of a job directory: its staged files and job.json, then every declared output
    and result.json at their caps. A job can fill it, never the host's disk."""
    staged = sum(os.path.getsize(path) for path in job.files.values())
    return staged + job_json_bytes + sum(job.outputs.values()) + RESULT_CAP + JOB_DIR_SLACK


class StagedJob:
    """A fresh host directory holding job.json and the job's files, seen as `inside` by the job;
    with `capped`, a tmpfs of job_dir_bytes(job) (else a line in `warnings` says it is uncapped)."""

    def __init__(self, job: Job, inside: str | None = None, owner: int | None = None,
                 parent: Path | None = None, inside_parent: str | None = None, capped: bool = False) -> None:
        """`inside`: the job dir's path as the job sees it; or, for jobs staged under a shared
        `parent` directory, `inside_parent` is where the job sees that parent."""
        self.host = Path(tempfile.mkdtemp(prefix=mounts.prefix("job"), dir=parent))
        self.inside = f"{inside_parent}/{self.host.name}" if inside_parent else inside or str(self.host)
        self.warnings: list[str] = []
        self.mounted = False
        payload = dict(job.payload)
        for name in [*job.files, *job.outputs]:  # where the worker reads each file and writes each output
            payload[f"{Path(name).stem}_path"] = f"{self.inside}/{name}"
        payload["result_path"] = f"{self.inside}/result.json"
        text = json.dumps(payload)
        try:
            if capped:
                self._cap(job_dir_bytes(job, len(text.encode())))
            for name, host_path in job.files.items():
                shutil.copyfile(host_path, self.host / name)
            (self.host / "job.json").write_text(text)
            if owner is not None:  # the sandboxed user must be able to write its result here
                self._hand_over(owner)
        except BaseException:  # a missing input file: leave no directory or mount behind
            self.cleanup()
            raise
        self.done = threading.Event()
        self.watcher = None
        if job.watch is not None:
            self.watcher = threading.Thread(target=job.watch, args=(self.host, self.done), daemon=True)
            self.watcher.start()

    def _cap(self, size_bytes: int) -> None:
        problem = mounts.mount_tmpfs(self.host, size_bytes)
        if problem:
            self.warnings.append(uncapped_warning(problem))
        self.mounted = problem is None

    def _hand_over(self, owner: int) -> None:
        if os.geteuid() == 0:
            for path in [self.host, *self.host.iterdir()]:
                os.chown(path, owner, owner)
        else:  # not root: another uid cannot be given the directory, only let in
            self.host.chmod(0o777)

    @property
    def job_file(self) -> str:
        return f"{self.inside}/job.json"

    def result(self) -> tuple[dict | None, str]:
        """(payload, problem): problem is "" when result.json is a JSON object or was never written,
        else why it was refused unread or unparsed (too large, not a regular file, not JSON): the
        job tampered with it or died mid-write."""
        data, problem = read_capped(self.host / "result.json", RESULT_CAP)
        if data is None:
            return None, "" if problem == "missing" else problem
        try:
            payload = json.loads(data.decode("utf-8", "replace"))
        except ValueError as exc:
            return None, f"not JSON ({exc})"
        return (payload, "") if isinstance(payload, dict) else (None, "not a JSON object")

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

    def job_result(self, job: Job, runtime: str, exit_code: int | None, stdout: str, stderr: str, wall_s: float,
                   timed_out: bool = False, oom_killed: bool = False, cpu_s: float = 0.0,
                   peak_rss_mb: float = 0.0) -> JobResult:
        """Everything the job left, read back within caps, as the JobResult its runtime returns."""
        payload, problem = self.result()
        files, errors = self.outputs(job.outputs)
        if problem:
            errors["result.json"] = problem
            stderr = f"{stderr.rstrip()}\nsandbox: result.json refused: {problem}".lstrip()
        reported_cpu, reported_rss = reported_usage(payload)
        oom = oom_killed or str((payload or {}).get("error", "")).startswith("MemoryError")
        return JobResult(exit_code=exit_code, payload=payload, stdout=stdout, stderr=stderr, wall_s=wall_s,
                         cpu_s=max(cpu_s, reported_cpu), peak_rss_mb=max(peak_rss_mb, reported_rss),
                         cause=cause_of(exit_code, payload, bool(problem), timed_out, oom), runtime=runtime,
                         outputs=files, output_errors=errors, warnings=list(self.warnings))

    def cleanup(self) -> None:
        if getattr(self, "watcher", None) is not None:
            self.done.set()
            self.watcher.join(5.0)
        if self.mounted:
            mounts.unmount(self.host)
        shutil.rmtree(self.host, ignore_errors=True)


def uncapped_warning(why: str) -> str:
    return f"job directory not size-capped ({why}): the job could fill the host's disk"


def reported_usage(payload: dict | None) -> tuple[float, float]:
    """(cpu_s, max_rss_mb) as the worker reported them; a jailed or containerised worker is not our
    direct child, so only it can say. Anything but numbers (a forged result) counts as zero."""
    usage = (payload or {}).get("usage")
    usage = usage if isinstance(usage, dict) else {}
    numbers = [usage.get("cpu_s"), usage.get("max_rss_mb")]
    cpu, rss = (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0 for v in numbers)
    return cpu, rss


def read_capped(path: Path, cap: int) -> tuple[bytes | None, str]:
    """(bytes, "") for a regular file of at most `cap` bytes; else (None, why). Never follows a
    link and checks the size before reading, so a job cannot point the reader at a host file or
    make it read a sparse terabyte."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, "missing"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "a symbolic link (never followed)"
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


class CappedText:
    """The first and last STDIO_CAP/2 bytes of a stream fed in chunks, and how many were cut: a
    flood costs no memory or disk, and the text says where it was cut."""

    def __init__(self) -> None:
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def add(self, chunk: bytes) -> None:
        half = STDIO_CAP // 2
        self.total += len(chunk)
        if len(self.head) < half:
            take = half - len(self.head)
            self.head += chunk[:take]
            chunk = chunk[take:]
        if chunk:
            self.tail = (self.tail + chunk[-half:])[-half:]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {cut} bytes cut ...]\n" if cut > 0 else ""
        return (bytes(self.head) + middle.encode() + bytes(self.tail)).decode("utf-8", "replace")


class CappedReader(threading.Thread):
    """Drains a pipe into a CappedText."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.stream, self.kept = stream, CappedText()

    def run(self) -> None:
        for chunk in iter(lambda: self.stream.read(65536), b""):
            self.kept.add(chunk)

    def text(self) -> str:
        self.join(timeout=5)
        return self.kept.text()


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
