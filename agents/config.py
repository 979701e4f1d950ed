"""Typed configuration of an agent run: the budget and its stop rules."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from harness.errors import OpforgeError


@dataclass(frozen=True)
class Budget:
    rounds: int = 4  # draft -> evaluate -> reflect cycles at most
    candidates: int = 2  # drafts per round
    wall_s: float = 1800.0
    tokens: int = 200_000  # LLM tokens (prompt + completion) for the whole run
    target_speedup: float | None = None  # stop once the best is this much faster than eager (GPU only)
    plateau_rounds: int = 2  # stop when the best has not improved for this many rounds

    def __post_init__(self) -> None:
        for name in ("rounds", "candidates", "tokens"):
            if getattr(self, name) < 1:
                raise OpforgeError(f"budget: {name} must be at least 1")
        if self.wall_s <= 0:
            raise OpforgeError("budget: wall time must be positive")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Budget":
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
