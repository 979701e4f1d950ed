"""Runs in the background: `opforge run` as a detached process (its own session, so closing the
workbench page or restarting its server does not stop it) that writes to the registry. Whoever
started one follows it by its run key through the registry; a small record per run (pid, log)
under `<registry dir>/background-runs/` tells "starting", "running" and "process gone" apart
after a reload, and a run whose process is gone is resumed from its last checkpoint."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from opforge.agents.config import RunOptions
from opforge.agents.drafters.select import DRAFTERS
from opforge.agents.options import run_argv
from opforge.harness.errors import OpforgeError
from opforge.registry import new_run_key

ROOT = Path(__file__).resolve().parents[2]  # where `python -m opforge.cli` runs: the folder holding the package


@dataclass(frozen=True)
class RunRequest:
    """A run to start in the background: the spec, the loop's options and, for the LLM drafter,
    its endpoint; turned into an `opforge run` command line with the same flags as the CLI's."""

    spec_path: str
    options: RunOptions = field(default_factory=RunOptions)
    llm_base_url: str | None = None
    llm_model: str | None = None
    # Given to the run process's environment only; never written down (nor shown by repr).
    llm_api_key: str | None = field(default=None, repr=False)

    def argv(self, db_path: Path, run_key: str) -> list[str]:
        return [sys.executable, "-m", "opforge.cli", "--db", str(db_path), "run", self.spec_path,
                *run_argv(self.options), "--run-key", run_key]

    def env(self) -> dict[str, str]:
        extra = {"OPFORGE_LLM_BASE_URL": self.llm_base_url, "OPFORGE_LLM_MODEL": self.llm_model,
                 "OPENAI_API_KEY": self.llm_api_key}
        return os.environ | {k: v for k, v in extra.items() if v}


@dataclass(frozen=True)
class BackgroundRun:
    """The record of a run started in the background: its process and where its output goes."""

    run_key: str
    pid: int
    log: str
    spec_path: str
    started: float

    @property
    def alive(self) -> bool:
        return pid_alive(self.pid)


def _records(db_path: Path) -> Path:
    path = Path(db_path).parent / "background-runs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _spawn(argv: list[str], env: dict[str, str], db_path: Path, run_key: str, spec_path: str) -> BackgroundRun:
    log = _records(db_path) / f"{run_key}.log"
    with open(log, "ab") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                cwd=ROOT, start_new_session=True)
    run = BackgroundRun(run_key=run_key, pid=proc.pid, log=str(log), spec_path=spec_path, started=time.time())
    (_records(db_path) / f"{run_key}.json").write_text(json.dumps(asdict(run)))
    return run


def start_background_run(request: RunRequest, db_path: Path) -> BackgroundRun:
    """Start `opforge run` detached; returns at once with the run's key (the run row appears once the
    process has loaded the spec, a few seconds later)."""
    kind = DRAFTERS.get(request.options.drafter)  # None: automatic, from the server's environment
    if kind is not None and kind.needs_endpoint and not (request.llm_base_url and request.llm_model):
        raise OpforgeError(f"the {kind.name} drafter needs an endpoint URL and a model name")
    run_key = new_run_key()
    return _spawn(request.argv(db_path, run_key), request.env(), db_path, run_key, request.spec_path)


def resume_background_run(run_key: str, db_path: Path) -> BackgroundRun:
    """Continue a run whose process is gone (killed, machine restarted) from its last checkpoint."""
    argv = [sys.executable, "-m", "opforge.cli", "--db", str(db_path), "run", "--resume", run_key]
    record = background_run(db_path, run_key)
    return _spawn(argv, dict(os.environ), db_path, run_key, record.spec_path if record else "")


def background_run(db_path: Path, run_key: str) -> BackgroundRun | None:
    """The record of a run started in the background; None for runs started otherwise."""
    path = _records(db_path) / f"{run_key}.json"
    try:
        return BackgroundRun(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def recent_background_runs(db_path: Path, limit: int = 20) -> list[BackgroundRun]:
    files = sorted(_records(db_path).glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    return [run for p in files[:limit] if (run := background_run(db_path, p.stem))]


def log_tail(run: BackgroundRun, lines: int = 30) -> str:
    try:
        text = Path(run.log).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def pid_alive(pid: int) -> bool:
    """The process exists and is not a zombie (one that exited and whose parent has not reaped it)."""
    if pid <= 0:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # the command name may hold ')'
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
            return True
        except (ProcessLookupError, PermissionError):  # gone, or the pid now is another user's process
            return False
