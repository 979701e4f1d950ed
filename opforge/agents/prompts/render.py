"""Render the drafting prompt for a DraftRequest: the system contract and the user message.

A reply that gave no usable candidate (failed step UNUSABLE_STEP) is quoted back so the model can
fix its own code: numbered, `>>` at the line where parsing stopped; a reply without code (or without
ModelNew) is shown as it came back, cut to a few dozen lines."""
from __future__ import annotations

import re
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from opforge.agents.drafters.base import UNUSABLE_STEP, Attempt, DraftRequest
from opforge.backends import describe, known

# An attempt's source past this many lines is cut: the feedback names the line that matters, and a
# round with 4 full attempts of a 400-line GEMM would crowd out the spec and the knowledge.
MAX_SOURCE_LINES = 150
# Older attempts than this are only counted: the newest ones carry the lessons the next draft needs.
MAX_ATTEMPTS_SHOWN = 8
# Code that did not parse: past MAX_SOURCE_LINES only its head and this many lines either side of
# the error line are shown, so the line the parser named is always in the prompt.
ERROR_CONTEXT_LINES = 8
# A reply with no code or no ModelNew: enough to see what came back, not a runaway reply's 20k chars.
MAX_REPLY_LINES = 40
MAX_REPLY_CHARS = 3000
MAX_LINE_CHARS = 300  # a single minified line must not fill the prompt either

_ENV = Environment(
    loader=FileSystemLoader(Path(__file__).resolve().parent),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
    autoescape=False,
)




def _system(backend: str) -> str:
    """The system contract: each backend's folder has its own (system.j2), its candidate format and rules."""
    return (known(backend).folder / "system.j2").read_text(encoding="utf-8")


def render_messages(request: DraftRequest) -> list[dict]:
    """[{"role": "system", ...}, {"role": "user", ...}] for one chat completion."""
    return [
        {"role": "system", "content": _ENV.from_string(_system(request.backend)).render().strip() + "\n"},
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
        # draft.j2's paragraph on the GPU rules (registers, shared memory) only where the interpreter run
        # is paired with an sm_90 compile: it would mislead the others, whose system prompt has the target's.
        "interpreter": "interpreter" in request.hardware and describe(request.backend).gpu_compile,
        "on_cpu": request.hardware.startswith("cpu") or "interpreter" in request.hardware,
        "language": describe(request.backend).label,
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
    title += ": correct" if attempt.correct else f": failed at {attempt.failed_step}"
    if attempt.speedup is not None:
        title += f", {attempt.speedup:.2f}x vs PyTorch"
    unusable = attempt.failed_step == UNUSABLE_STEP and bool(attempt.source)
    return {
        "number": number,
        "title": title,
        "correct": attempt.correct,
        "feedback": attempt.feedback,  # verbatim: the numbers in it are what the model must act on
        "source": truncate_lines(attempt.source) if attempt.source and not unusable else None,
        "rejected": _rejected(attempt.source, attempt.line) if unusable else None,
    }


def _rejected(text: str, line: int | None) -> dict:
    """How an unusable reply is quoted: a heading, the text, and a fence longer than any inside it."""
    if line is not None:
        heading = f"Your code as it came back (`>>` marks line {line}, where parsing stopped):"
        body = numbered_excerpt(text, line)
    else:
        heading = "What your reply held instead of a usable candidate:"
        body = reply_excerpt(text)
    runs = [len(m) for m in re.findall(r"`{3,}", body)]
    return {"heading": heading, "text": body, "fence": "`" * max([3] + [n + 1 for n in runs])}


def numbered_excerpt(code: str, line: int, limit: int = MAX_SOURCE_LINES) -> str:
    """Every line numbered, `>>` at `line`; a longer file keeps its head and the error's context."""
    lines = code.splitlines() or [""]
    at = min(max(line, 1), len(lines))
    keep = set(range(1, len(lines) + 1))
    if len(lines) > limit:
        lo, hi = max(1, at - ERROR_CONTEXT_LINES), min(len(lines), at + ERROR_CONTEXT_LINES)
        keep = set(range(1, limit - (hi - lo + 1) + 1)) | set(range(lo, hi + 1))
    width, out, previous = len(str(len(lines))), [], 0
    for number in sorted(keep):
        if number > previous + 1:
            out.append(f"   {'.' * width} ({number - previous - 1} lines not shown)")
        out.append(f"{'>>' if number == at else '  '} {number:>{width}} | {_clip_line(lines[number - 1])}")
        previous = number
    if previous < len(lines):
        out.append(f"   {'.' * width} ({len(lines) - previous} more lines not shown)")
    return "\n".join(out)


def reply_excerpt(text: str) -> str:
    """The start of what came back: MAX_REPLY_LINES lines, MAX_REPLY_CHARS characters at most."""
    text = text.strip("\n")
    body = "\n".join(_clip_line(t) for t in text.splitlines()[:MAX_REPLY_LINES])[:MAX_REPLY_CHARS]
    left = len(text) - len(body)
    return body + (f"\n... (cut here: {left} more characters not shown)" if left > 0 else "")


def _clip_line(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " ...(line cut)"


def truncate_lines(source: str, limit: int = MAX_SOURCE_LINES) -> str:
    lines = source.strip("\n").splitlines()
    if len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join(lines[:limit] + [f"# ... ({len(lines) - limit} more lines not shown)"])
