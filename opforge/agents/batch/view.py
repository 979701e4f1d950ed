"""The batch's live view (an overall bar plus one line per running op with its latest progress) and its final
table, rendered with rich from run_batch's events and report; the CLI owns the console."""
from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from opforge.agents.batch.report import BatchReport
from opforge.registry.levels import level_label

MARKS = {"verified": "[green]✓ verified[/]", "skipped": "[cyan]= skipped[/]", "failed": "[red]✗ failed[/]",
         "error": "[red]✗ error[/]", "timeout": "[red]✗ timeout[/]"}
PROGRESS_WIDTH = 90


class BatchProgress:
    """Use as a context manager and pass as run_batch's on_event."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=24),
                                 MofNCompleteColumn(), TimeElapsedColumn(), console=console)
        self.overall = self.progress.add_task("[bold]batch[/]", total=None)
        self.lines: dict[str, int] = {}

    def __enter__(self) -> BatchProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def __call__(self, event: dict) -> None:
        kind, op = event["kind"], event.get("op")
        if kind == "plan":
            self.progress.update(self.overall, total=len(event["tasks"]))
        elif kind == "start":
            label = "resuming" if event.get("action") == "resume" else "starting"
            self.lines[op] = self.progress.add_task(f"  {op}: {label}", total=None)
        elif kind == "progress" and op in self.lines:
            progress = f"{event.get('node', '')}: {event.get('message', '')}"
            self.progress.update(self.lines[op], description=f"  {op}: {progress[:PROGRESS_WIDTH]}")
        elif kind == "done":
            self._done(op, event["result"])

    def _done(self, op: str, result: dict) -> None:
        if op in self.lines:
            self.progress.remove_task(self.lines.pop(op))
        self.progress.advance(self.overall)
        detail = result.get("error") or result.get("stop_reason") or ""
        took = f" in {result['time_s']:.1f} s" if result.get("time_s") else ""
        self.progress.console.print(f"{MARKS.get(result['status'], result['status'])} {op}{took}"
                                    + (f" [dim]({detail[:120]})[/]" if detail else ""), highlight=False)


def report_table(report: BatchReport) -> Table:
    table = Table("op", "status", "best", "correct", "level", "speedup", "time s", "tokens", "note",
                  title=f"batch on {report.hardware} ({report.executor}, {report.jobs} job(s), {report.wall_s:.1f} s)")
    for row in report.rows:
        best = "—"
        if row["best_candidate_id"]:
            best = f"#{row['best_candidate_id']}" + (f" v{row['version']}" if row["version"] else "")
        correct = "—" if row["correct"] is None else ("[green]yes[/]" if row["correct"] else "[red]no[/]")
        speedup = f"{row['speedup_eager']:.2f}x" if row["speedup_eager"] else "—"
        table.add_row(row["op"], MARKS.get(row["status"], row["status"]), best, correct,
                      level_label(row.get("level")), speedup,
                      f"{row['time_s']:.1f}" if row["time_s"] is not None else "—", str(row["tokens"] or 0),
                      (row["error"] or row["stop_reason"] or "")[:60])
    return table


def summary_line(report: BatchReport) -> str:
    counts = ", ".join(f"{n} {status}" for status, n in sorted(report.counts.items()))
    return f"{len(report.rows)} op(s): {counts}"
