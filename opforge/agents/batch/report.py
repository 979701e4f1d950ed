"""The batch report: one row per op (status, best kernel and its version, correctness, the step that
failed if one did, its level on the verification ladder and where, speedup where timed, time, tokens), filled from the executors'
outcomes and the registry, written as JSON or CSV."""
from __future__ import annotations

import csv
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from opforge.harness.errors import OpforgeError

FAILED = ("failed", "error", "timeout")
COLUMNS = ("op", "status", "action", "run_key", "best_candidate_id", "version", "correct", "failed_step",
           "level", "verified_on", "speedup_eager", "kernel_ms", "time_s", "tokens", "stop_reason", "error", "spec_path")


@dataclass
class BatchReport:
    executor: str
    jobs: int
    backend: str
    hardware: str
    started_at: str
    finished_at: str
    wall_s: float
    rows: list[dict] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for row in self.rows:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        return counts

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.rows if r["status"] in FAILED]

    def to_dict(self) -> dict:
        return asdict(self) | {"counts": self.counts}


def op_row(task, result: dict, registry, hardware: str) -> dict:
    """The report's row for one op: the outcome plus what the registry knows of its best kernel."""
    row = {c: None for c in COLUMNS} | {k: v for k, v in result.items() if k in COLUMNS}
    row |= {"op": task.op, "action": task.action, "spec_path": task.spec_path}
    best = result.get("best_candidate_id") or task.candidate_id
    if best:
        row |= {"best_candidate_id": best} | _kernel_facts(registry, best, hardware)
    return row


def skipped_outcome(task) -> dict:
    return {"status": "skipped", "best_candidate_id": task.candidate_id, "tokens": 0, "time_s": 0.0,
            "run_key": task.run_key,
            "stop_reason": task.note or "already verified for this spec source, backend and hardware"}


def _kernel_facts(registry, candidate_id: int, hardware: str) -> dict:
    cand = registry.get_candidate(candidate_id)
    if cand is None:
        return {}
    evals = [e for e in cand.evaluations if e.hardware == hardware] or list(cand.evaluations)
    latest = evals[-1] if evals else None
    version = next((v.number for v in registry.versions(cand.op)
                    if v.candidate_id == candidate_id and v.backend == cand.backend), None)
    return {"version": version, "correct": latest.correct if latest else None,
            "failed_step": latest.failed_step if latest else None,
            "level": latest.level if latest else None,  # None: not known (a verdict from before the ladder)
            "verified_on": latest.verified_on if latest else None,
            "speedup_eager": latest.speedup_eager if latest else None,
            "kernel_ms": latest.kernel_ms if latest else None}


def default_report_path(db_path: Path, report: BatchReport) -> Path:
    """<registry folder>/reports/batch-<start, UTC>-<pid>.json (two batches started in the same
    second on one registry must not overwrite each other's report)."""
    stamp = report.started_at.split("+")[0].split(".")[0].replace("-", "").replace(":", "")
    return Path(db_path).parent / "reports" / f"batch-{stamp}-{os.getpid()}.json"


def check_report_path(path: Path) -> None:
    """Refuse an unwritable --report before the batch runs, not after hours of work."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OpforgeError(f"--report {path}: cannot create its folder ({exc.strerror})") from None
    if path.is_dir() or not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OpforgeError(f"--report {path}: not a writable file path")


def write_report(report: BatchReport, path: Path) -> Path:
    """JSON (the whole report) or, for a .csv path, one CSV row per op."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == ".csv":
            with path.open("w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=COLUMNS)
                writer.writeheader()
                writer.writerows(report.rows)
        else:
            path.write_text(json.dumps(report.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")
    except OSError as exc:
        raise OpforgeError(f"cannot write the report to {path}: {exc.strerror}") from None
    return path
