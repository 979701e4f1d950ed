"""Input checks for registry writes.

Bad input is refused with a RegistryError naming the field, before anything
reaches SQLite, where it would surface as an IntegrityError or as a TypeError
from the JSON serializer halfway through a flush. require_row, the one check
that reads the database, runs inside the write transaction instead.
"""

from __future__ import annotations

import json
import math
from typing import Any

from sqlalchemy.orm import Session

from opforge.harness.ladder import LEVELS, failed_check, read_verdict
from opforge.registry.errors import RegistryError
from opforge.registry.models import Base


def require_text(field: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RegistryError(f"{field} must be a non-empty string, got {value!r}")
    return value


def _finite_only(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite_only(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_only(v) for v in value]
    return value


def dumps_json(value: Any) -> str:
    """The engine's JSON serializer: NaN and infinities are stored as null.

    json.dumps would write them as bare NaN/Infinity, which is not JSON:
    SQLite's json functions (used by migrations and queries) reject the whole
    document. A failing kernel's verdict can well contain NaN errors, and its
    `reasons` already say what went wrong, so null loses nothing essential.
    """
    return json.dumps(_finite_only(value), allow_nan=False)


def require_json(field: str, value: object) -> None:
    try:
        dumps_json(value)
    except (TypeError, ValueError) as exc:
        raise RegistryError(f"{field} is not JSON-serialisable: {exc}") from exc


def finite_number(value: object) -> float | None:
    """`value` as a float if it is a finite real number, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def check_verdict(verdict: object) -> dict[str, Any]:
    """Validate the harness verdict shape that the registry indexes on, and return it in today's
    keys: a verdict written before `steps` (with `stages` and `stage`) is read by ladder.read_verdict."""
    if not isinstance(verdict, dict):
        raise RegistryError(f"verdict must be a dict, got {type(verdict).__name__}")
    verdict = read_verdict(verdict)
    missing = [k for k in ("correct", "failed_step", "reasons") if k not in verdict]
    if missing:
        raise RegistryError(f"verdict lacks {', '.join(missing)}")
    if not isinstance(verdict["correct"], bool):
        raise RegistryError(f"verdict['correct'] must be a bool, got {verdict['correct']!r}")
    _check_steps(verdict)
    reasons = verdict["reasons"]
    if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
        raise RegistryError("verdict['reasons'] must be a list of strings")
    timings = verdict.get("timings")
    if timings is not None and not isinstance(timings, dict):
        raise RegistryError(f"verdict['timings'] must be a dict or None, got {type(timings).__name__}")
    verdict_level(verdict)
    require_json("verdict", verdict)
    return verdict


def _check_steps(verdict: dict[str, Any]) -> None:
    """`steps` a dict of records, and `failed_step` None or the name of one of them that failed."""
    steps, name = verdict.get("steps", {}), verdict["failed_step"]
    if not isinstance(steps, dict) or not all(isinstance(r, dict) for r in steps.values()):
        raise RegistryError("verdict['steps'] must be a dict of step records")
    if name is not None and (steps.get(require_text("verdict['failed_step']", name)) or {}).get("status") != "failed":
        raise RegistryError(f"verdict['failed_step'] {name!r} is not a failed step of verdict['steps']")


def verdict_level(verdict: dict[str, Any]) -> tuple[str | None, str | None]:
    """The verdict's (level, verified_on); (None, None) for a verdict from before the ladder."""
    level, verified_on = verdict.get("level"), verdict.get("verified_on")
    if level is not None and level not in LEVELS:
        raise RegistryError(f"verdict['level'] must be one of {', '.join(LEVELS)} or None, got {level!r}")
    if verified_on is not None and (not isinstance(verified_on, str) or not verified_on.strip()):
        raise RegistryError(f"verdict['verified_on'] must be a non-empty string or None, got {verified_on!r}")
    return level, verified_on


def evaluation_columns(verdict: dict[str, Any]) -> dict[str, Any]:
    """An Evaluation's columns copied out of a checked verdict (the verdict itself included)."""
    verdict = read_verdict(verdict)
    timings = verdict.get("timings")
    level, verified_on = verdict_level(verdict)
    return {
        "correct": verdict["correct"], "failed_step": verdict["failed_step"], "failed_check": failed_check(verdict),
        "reasons": list(verdict["reasons"]),
        "verdict": verdict, "timings": timings, "level": level, "verified_on": verified_on,
        "kernel_ms": finite_number((timings or {}).get("kernel_ms")),
        "speedup_eager": finite_number((timings or {}).get("speedup_eager")),
    }


def require_count(field: str, value: object, minimum: int = 0) -> int:
    """An int (not a bool) of at least `minimum`: token counts, rounds, limits."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RegistryError(f"{field} must be an integer >= {minimum}, got {value!r}")
    return value


def optional_text(field: str, value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise RegistryError(f"{field} must be a string or None, got {type(value).__name__}")
    return value


def require_row(s: Session, model: type[Base], row_id: int | None, what: str) -> None:
    """Refuse a reference to a row that does not exist (None is no reference): a clear
    message instead of the foreign key error SQLite would give at flush."""
    if row_id is not None and s.get(model, row_id) is None:
        raise RegistryError(f"{what} {row_id} does not exist")
