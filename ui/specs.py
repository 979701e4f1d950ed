"""Runs the workbench starts in the background: `opforge run` as a detached process (its own
session, so closing the page or restarting the server does not stop it) that writes to the
registry. The pages follow a run by its key through the registry; a small launch record per run
(pid, log) under `<registry dir>/ui-runs/` lets them tell "starting", "running" and "process gone"
apart after a reload. Also: where uploaded or edited specs are saved, and their validation."""
from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.errors import OpforgeError
from harness.spec import OpSpec
from registry import new_run_key

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "ops"


@dataclass(frozen=True)
class RunRequest:
    """What the request page collects; turned into an `opforge run` command line."""

    spec_path: str
    drafter: str = "expert"  # "expert" | "llm"
    backend: str = "triton"
    budget: int = 4
    candidates: int = 2
    wall_s: float = 1800.0
    device: str = "auto"  # "auto": the GPU when there is one; "cpu": Triton's interpreter
    arch: int | None = None  # AOT target (90 = sm_90); None: the GPU's own, else 90
    llm_base_url: str | None = None
    llm_model: str | None = None
    # Given to the run process's environment only; never written down (nor shown by repr).
    llm_api_key: str | None = field(default=None, repr=False)

    def argv(self, db_path: Path, run_key: str) -> list[str]:
        argv = [sys.executable, "-m", "cli", "--db", str(db_path), "run", self.spec_path, "--drafter", self.drafter,
                "--backend", self.backend, "--budget", str(self.budget), "--candidates", str(self.candidates),
                "--wall", str(self.wall_s), "--device", self.device, "--run-key", run_key]
        return argv + (["--arch", str(self.arch)] if self.arch else [])

    def env(self) -> dict[str, str]:
        extra = {"OPFORGE_LLM_BASE_URL": self.llm_base_url, "OPFORGE_LLM_MODEL": self.llm_model,
                 "OPENAI_API_KEY": self.llm_api_key}
        return os.environ | {k: v for k, v in extra.items() if v}


@dataclass(frozen=True)
class Launch:
    run_key: str
    pid: int
    log: str
    spec_path: str
    started: float

    @property
    def alive(self) -> bool:
        return _alive(self.pid)


def suite_specs() -> list[Path]:
    return sorted(p for p in SUITE.glob("*.py") if not p.name.startswith("_"))


def save_spec(text: str, filename: str, db_path: Path) -> Path:
    """Keep an uploaded or edited spec beside the registry, named by its content (runs refer to it)."""
    stem = re.sub(r"[^A-Za-z0-9_]+", "_", Path(filename).stem).strip("_") or "spec"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    # specs/<digest>/<stem>.py: the op name comes from the file stem when the spec has no
    # OPFORGE["name"], and it must stay the user's (a hash in it would not export as a module name).
    path = Path(db_path).parent / "specs" / digest / f"{stem}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return path


def validate_spec(path: Path, device: str = "auto") -> OpSpec:
    """The spec loader's own checks (raises SpecError with one clear line)."""
    from harness.verify import VerifyOptions, prepare

    spec, _hardware = prepare(path, VerifyOptions(device=None if device == "auto" else "cpu"))
    return spec


def _launch_dir(db_path: Path) -> Path:
    path = Path(db_path).parent / "ui-runs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _spawn(argv: list[str], env: dict[str, str], db_path: Path, run_key: str, spec_path: str) -> Launch:
    log = _launch_dir(db_path) / f"{run_key}.log"
    with open(log, "ab") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                cwd=ROOT, start_new_session=True)
    launch = Launch(run_key=run_key, pid=proc.pid, log=str(log), spec_path=spec_path, started=time.time())
    (_launch_dir(db_path) / f"{run_key}.json").write_text(json.dumps(asdict(launch)))
    return launch


def start_run(request: RunRequest, db_path: Path) -> Launch:
    """Start `opforge run` detached; returns at once with the run's key (the run row appears once the
    process has loaded the spec, a few seconds later)."""
    if request.drafter == "llm" and not (request.llm_base_url and request.llm_model):
        raise OpforgeError("the LLM drafter needs an endpoint URL and a model name")
    run_key = new_run_key()
    return _spawn(request.argv(db_path, run_key), request.env(), db_path, run_key, request.spec_path)


def resume_run(run_key: str, db_path: Path) -> Launch:
    """Continue a run whose process is gone (killed, machine restarted) from its last checkpoint."""
    argv = [sys.executable, "-m", "cli", "--db", str(db_path), "run", "--resume", run_key]
    spec = (launch_info(db_path, run_key) or Launch(run_key, 0, "", "", 0)).spec_path
    return _spawn(argv, dict(os.environ), db_path, run_key, spec)


def launch_info(db_path: Path, run_key: str) -> Launch | None:
    """The launch record of a run this workbench started; None for runs started elsewhere."""
    path = _launch_dir(db_path) / f"{run_key}.json"
    try:
        return Launch(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def recent_launches(db_path: Path, limit: int = 20) -> list[Launch]:
    files = sorted(_launch_dir(db_path).glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    return [launch for p in files[:limit] if (launch := launch_info(db_path, p.stem))]


def log_tail(launch: Launch, lines: int = 30) -> str:
    try:
        text = Path(launch.log).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def stop_process(launch: Launch) -> None:
    """SIGTERM the launch's process group: for a run that is still starting (no run row to cancel yet)."""
    if launch.alive:
        try:
            os.killpg(launch.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie (a finished child the server has not reaped)."""
    if pid <= 0:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False
