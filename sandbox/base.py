"""One interface for running a job on untrusted code: `Sandbox.run(job) -> JobResult`, which never raises.

Runtimes: `none` (a plain child process in its own session with a time limit and a scrubbed
environment — it isolates nothing else, so a verdict made with it carries a warning).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

STDIO_CAP = 64 * 1024  # bytes of stdout/stderr kept from a job; a candidate may print gigabytes
# The only variables a job sees: no API keys, no home, no registry location.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "TRITON_DEFAULT_FP_FUSION")


@dataclass(frozen=True)
class Job:
    """Run `python -m harness.worker job.json` on `payload`, with `files` copied into a scratch dir."""

    payload: dict
    files: dict[str, str] = field(default_factory=dict)  # scratch name -> host path (copied)
    timeout_s: float = 600.0


@dataclass
class JobResult:
    exit_code: int | None
    payload: dict | None
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0
    cause: str | None = None  # timeout | oom | killed | crashed | denied
    runtime: str = "none"

    @property
    def ok(self) -> bool:
        return self.cause is None and self.payload is not None and "error" not in self.payload


class Sandbox(Protocol):
    name: str

    def run(self, job: Job) -> JobResult: ...


def scrubbed_env(scratch: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    env.update(HOME=str(scratch), TMPDIR=str(scratch), PYTHONDONTWRITEBYTECODE="1",
               TRITON_CACHE_DIR=str(scratch / ".triton"), PYTHONHASHSEED="0")
    return env


def stage_job(job: Job, scratch: Path) -> Path:
    """Copy the job's files into scratch and write job.json naming them there."""
    payload = dict(job.payload)
    for name, host_path in job.files.items():
        shutil.copyfile(host_path, scratch / name)
        payload[f"{Path(name).stem}_path"] = str(scratch / name)
    payload["result_path"] = str(scratch / "result.json")
    job_file = scratch / "job.json"
    job_file.write_text(json.dumps(payload))
    return job_file


def read_capped(path: Path) -> str:
    size = path.stat().st_size if path.exists() else 0
    with open(path, "rb") as fh:
        if size > STDIO_CAP:
            fh.seek(size - STDIO_CAP)
        text = fh.read().decode("utf-8", "replace")
    return (f"[{size - STDIO_CAP} bytes cut]\n" if size > STDIO_CAP else "") + text


def worker_argv() -> list[str]:
    return [sys.executable, "-m", "harness.worker", "job.json"]


def new_scratch() -> Path:
    return Path(tempfile.mkdtemp(prefix="opforge-job-"))


def get_sandbox(name: str | None = None) -> Sandbox:
    """The runtime asked for (argument, else OPFORGE_SANDBOX, else `none`)."""
    from sandbox.errors import SandboxUnavailable
    from sandbox.process import ProcessSandbox

    name = name or os.environ.get("OPFORGE_SANDBOX") or "none"
    if name == "none":
        return ProcessSandbox()
    raise SandboxUnavailable(f"sandbox runtime '{name}' is not available (known: none)")
