"""Render the drafting prompt for a DraftRequest: the system contract and the user message."""
from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from agents.drafters.base import Attempt, DraftRequest

# An attempt's source past this many lines is cut: the feedback names the line that matters, and a
# round with 4 full attempts of a 400-line GEMM would crowd out the spec and the knowledge.
MAX_SOURCE_LINES = 150
# Older attempts than this are only counted: the newest ones carry the lessons the next draft needs.
MAX_ATTEMPTS_SHOWN = 8

_ENV = Environment(
    loader=FileSystemLoader(Path(__file__).resolve().parent),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
    autoescape=False,
)


def render_messages(request: DraftRequest) -> list[dict]:
    """[{"role": "system", ...}, {"role": "user", ...}] for one chat completion."""
    return [
        {"role": "system", "content": _ENV.get_template("system.j2").render().strip() + "\n"},
        {"role": "user", "content": _ENV.get_template("draft.j2").render(**_context(request)).strip() + "\n"},
    ]


def _context(request: DraftRequest) -> dict:
    numbered = [_shown(i + 1, a) for i, a in enumerate(request.attempts)]
    shown = numbered[-MAX_ATTEMPTS_SHOWN:]
    failures = [a for a in numbered if not a["correct"]]
    return {
        "op": request.op,
        "spec_source": request.spec_source,
        "backend": request.backend,
        "hardware": request.hardware,
        "interpreter": "interpreter" in request.hardware,
        "knowledge": request.knowledge,
        "attempts": shown,
        "omitted": len(numbered) - len(shown),
        "mode": request.mode,
        "latest_failure": failures[-1] if failures else None,
    }


def _shown(number: int, attempt: Attempt) -> dict:
    title = f"Attempt {number}"
    if attempt.candidate_id is not None:
        title += f" (candidate {attempt.candidate_id})"
    title += ": correct" if attempt.correct else f": failed at {attempt.stage}"
    if attempt.speedup is not None:
        title += f", {attempt.speedup:.2f}x vs PyTorch"
    return {
        "number": number,
        "title": title,
        "correct": attempt.correct,
        "feedback": attempt.feedback,  # verbatim: the numbers in it are what the model must act on
        "source": truncate_lines(attempt.source) if attempt.source else None,
    }


def truncate_lines(source: str, limit: int = MAX_SOURCE_LINES) -> str:
    lines = source.strip("\n").splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join(lines[:limit] + [f"# ... ({len(lines) - limit} more lines not shown)"])
