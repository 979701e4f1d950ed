"""Typed configuration of an agent run: the budget and its stop rules, and the run's options.

Each value is checked where it is defined (here, and harness.verify.VerifyOptions for how candidates
are verified), so `opforge run`, `opforge batch`, its Ray workers, the workbench and library
callers all refuse a bad value with the same one line; agents/options.py maps them to flags."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from opforge.agents.drafters.select import check_drafter
from opforge.harness.errors import OpforgeError
from opforge.harness.verify import VerifyOptions


@dataclass(frozen=True)
class Budget:
    rounds: int = 4  # draft -> evaluate -> reflect cycles at most
    candidates: int = 2  # drafts per round
    wall_s: float = 1800.0
    tokens: int = 200_000  # LLM tokens (prompt + completion) for the whole run
    target_speedup: float | None = None  # stop once the best is this much faster than eager (GPU only)
    plateau_rounds: int = 2  # stop when the best has not improved for this many rounds

    def __post_init__(self) -> None:
        for name in ("rounds", "candidates", "tokens", "plateau_rounds"):
            _check(name, getattr(self, name), integer=True)
        _check("wall_s", self.wall_s)
        if self.target_speedup is not None:
            _check("target_speedup", self.target_speedup)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Budget":
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def _check(name: str, value, integer: bool = False) -> None:
    """An integer of at least 1, else a positive number; bool is not a number here."""
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)) \
            or not (value >= 1 if integer else value > 0):
        rule = "an integer of at least 1" if integer else "a positive number"
        raise OpforgeError(f"budget: {name} must be {rule}, got {value!r}")


# The verify options a run records (beside its budget) and a resume reads back; the backend is the
# run row's own column.
RECORDED_VERIFY = ("device", "sandbox", "trials", "arch")


@dataclass(frozen=True)
class RunOptions:
    drafter: str | None = None  # a name of agents.drafters.select.DRAFTERS; None: the LLM when configured, else the expert
    budget: Budget = field(default_factory=Budget)
    verify: VerifyOptions = field(default_factory=VerifyOptions)  # its backend is the run's backend
    run_key: str | None = None  # None: a fresh key; the workbench picks one so it can follow a background run

    def __post_init__(self) -> None:
        check_drafter(self.drafter)
        if not isinstance(self.budget, Budget) or not isinstance(self.verify, VerifyOptions):
            raise OpforgeError("run options: budget must be a Budget and verify a VerifyOptions")

    @property
    def backend(self) -> str:
        return self.verify.backend

    def recorded(self) -> dict:
        """What the run's config keeps of these options, so that a resume runs with the same ones."""
        return {"budget": self.budget.to_dict(), **{name: getattr(self.verify, name) for name in RECORDED_VERIFY}}

    @classmethod
    def from_recorded(cls, drafter: str, backend: str, config: dict) -> "RunOptions":
        """The options of a recorded run; a value it did not record takes today's default."""
        verify = VerifyOptions(backend=backend, **{k: config[k] for k in RECORDED_VERIFY if k in config})
        return cls(drafter=drafter, budget=Budget.from_dict(config.get("budget", {})), verify=verify)
