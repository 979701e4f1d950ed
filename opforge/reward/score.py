"""Score one answer for one task: extract the kernel, verify it in the sandbox, turn the verdict
into a reward (tiers.py). The `Scorer` keeps one sandbox warm and each task's prepared spec, so a
training loop pays the spec's reference and the sandbox's start once, not per answer.

A task is an op spec (KernelBench's format) and a backend. Its spec comes as a file or as source
text (a dataset row carries the source, so a reward worker needs no checkout of the tasks): text is
written once to a cache folder under the op's name, which is what the harness calls the op."""
from __future__ import annotations

import hashlib
import secrets
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from opforge.agents.drafters.extract import extract
from opforge.backends import DEFAULT, describe
from opforge.harness.errors import OpforgeError, SpecError
from opforge.harness.verify import VerifyOptions, prepare, verify_source
from opforge.reward.tiers import REWARD_VERSION, classify, rank
from opforge.sandbox.select import get_sandbox

# Reward defaults: what a training step can afford per answer on a CPU (every variant, stress case,
# anti-cheat rule and repeated call still runs; fewer seeded trials of each). A sandbox job's time
# limit follows the task's estimated CPU seconds (harness/cost.py; walls measured 0.3-1.3x the
# estimate, alone): a hang costs that much, and a correct kernel on a loaded machine still finishes.
TRIALS = 2
# The CPU run's size budget (harness/cost.py's estimated seconds, in place of verification's 60 s): a
# reward costs a few seconds of a core on the suite's small ops, at sizes that still have ragged
# tiles, every variant and stress case (the cost model's floor, ~13-17 s, stops the halving).
BUDGET_S = 20.0
TIMEOUT_S = 600.0  # the most any job may take
TIMEOUT_PER_ESTIMATE = 4.0
MIN_TIMEOUT_S = 30.0
# What a replay compares: everything but the clock (and the verdict it was read from).
NOT_REPLAYED = ("elapsed_s", "verdict")


@dataclass(frozen=True)
class Task:
    """One problem: an op spec and the backend its kernel must be written for."""

    spec_source: str
    op: str
    backend: str = DEFAULT
    data_source: str = "opforge/custom"
    task_id: str | None = None
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def from_path(cls, path: str | Path, backend: str = DEFAULT, data_source: str = "opforge/custom") -> "Task":
        path = Path(path)
        if not path.is_file():
            raise SpecError(f"{path}: spec file not found")
        return cls(path.read_text(encoding="utf-8"), path.stem, backend, data_source, f"{data_source}/{path.stem}")

    @classmethod
    def from_wire(cls, data: dict) -> "Task":
        """The Task a `wire()` dict describes (a dataset row's ground truth, a reward server request)."""
        return cls(data["spec"], data["op"], data.get("backend") or DEFAULT, data.get("data_source") or "opforge/custom",
                   data.get("task_id"))

    def wire(self) -> dict:
        """The task as JSON-ready data, spec source included: what a reward worker scores from, no file needed."""
        return {"spec": self.spec_source, "op": self.op, "backend": self.backend, "data_source": self.data_source,
                "task_id": self.key}

    @property
    def key(self) -> str:
        return self.task_id or f"{self.data_source}/{self.op}"

    @property
    def spec_sha256(self) -> str:
        return hashlib.sha256(self.spec_source.encode()).hexdigest()


def spec_file(task: Task, root: Path) -> Path:
    """The task's spec as a file named after its op (written once per source)."""
    if not task.op.isidentifier():
        raise SpecError(f"op name {task.op!r} is not a Python identifier")
    path = root / task.spec_sha256[:16] / f"{task.op}.py"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{secrets.token_hex(4)}.tmp")
        tmp.write_text(task.spec_source, encoding="utf-8")
        tmp.replace(path)
    return path


class Scorer:
    """Scores answers; use as a context manager (it holds a warm sandbox). Not thread-safe: one per
    worker process or thread."""

    def __init__(self, device: str | None = "cpu", trials: int = TRIALS, timeout_s: float = TIMEOUT_S,
                 sandbox: str | None = None, cache: str | Path | None = None, budget_s: float = BUDGET_S) -> None:
        self.base = VerifyOptions(device=device, trials=trials, timeout_s=timeout_s, sandbox=sandbox, replayable=True)
        self.budget_s = budget_s
        self._tmp = None if cache else tempfile.TemporaryDirectory(prefix="opforge-reward-")
        self.cache = Path(cache) if cache else Path(self._tmp.name)
        self._prepared: dict[tuple[str, str], tuple] = {}
        self._sandbox = None

    def __enter__(self) -> "Scorer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def prepared(self, task: Task) -> tuple:
        """(spec, hardware) for a task: checked and sized once (raises SpecError for a bad spec)."""
        key = (task.spec_sha256 + task.op, task.backend)
        if key not in self._prepared:
            options = replace(self.base, backend=task.backend)
            self._prepared[key] = prepare(spec_file(task, self.cache), options, budget_s=self.budget_s)
        return self._prepared[key]

    def score(self, task: Task, answer: str, seed: int | None = None, raw: bool = False) -> dict:
        """The reward JSON of one answer: a model's reply (the kernel is extracted from it), or with
        `raw` the kernel file's text itself. Raises OpforgeError only for a bad task or a broken
        sandbox, never for anything the answer holds."""
        started = time.monotonic()
        seed = secrets.randbelow(2**31 - 10_000) if seed is None else int(seed)
        head = {"version": REWARD_VERSION, "task": task.key, "op": task.op, "backend": task.backend, "seed": seed,
                "spec_sha256": task.spec_sha256}
        source, problem = (answer, None) if raw else _extracted(answer)
        if source is None:
            verdict = {"correct": False, "reasons": [f"unusable: {problem}"], "failed_step": "draft",
                       "steps": {"draft": {"status": "failed", "reason": problem, "check": "reply"}}, "level": None}
        else:
            spec, hardware = self.prepared(task)
            options = replace(self.base, backend=task.backend, seed=seed, timeout_s=job_timeout(spec, self.base.timeout_s))
            if self._sandbox is None:
                self._sandbox = get_sandbox(options.sandbox)
            verdict = verify_source(spec, hardware, source, options, sandbox=self._sandbox)
        return reward_of(head, verdict, source, started)


def job_timeout(spec, most: float) -> float:
    """A sandbox job's limit for this task: 4x its estimated CPU seconds, at least 30 s, at most `most`."""
    estimate = (spec.cost or {}).get("estimated_s")
    return most if estimate is None else min(most, max(MIN_TIMEOUT_S, TIMEOUT_PER_ESTIMATE * estimate))


def _extracted(answer: str) -> tuple[str | None, str | None]:
    if not isinstance(answer, str):
        return None, f"the answer is a {type(answer).__name__}, not text"
    found = extract(answer)
    return found.source, found.problem


def reward_of(head: dict, verdict: dict, source: str | None, started: float) -> dict:
    """The reward JSON: `head` (task, seed), the tier and its number, and the verdict's evidence."""
    tier = classify(verdict, cheat_rules(head["backend"]))
    return head | {
        "scored": tier["tier"] is not None, "tier": tier["tier"],
        "tier_rank": None if tier["tier"] is None else rank(tier["tier"]), "reward": tier["reward"],
        "why": tier["why"], "fraction_passed": tier["fraction"], "speed_term": tier["speed"],
        "correct": bool(verdict.get("correct")), "level": verdict.get("level"),
        "failed_step": verdict.get("failed_step"), "reasons": list(verdict.get("reasons") or []),
        "timings": verdict.get("timings"),
        "candidate_sha256": hashlib.sha256(source.encode()).hexdigest() if source is not None else None,
        "elapsed_s": round(time.monotonic() - started, 3), "verdict": verdict,
    }


def cheat_rules(backend: str) -> frozenset[str]:
    """The backend's own static rules whose breach is a cheat (its plugin's `cheat_rules`)."""
    return frozenset(getattr(describe(backend), "cheat_rules", ()) or ())


def replayable(reward: dict) -> dict:
    """What two scorings of the same answer and seed must agree on."""
    return {k: v for k, v in reward.items() if k not in NOT_REPLAYED}


def task_error(task_key: str, exc: OpforgeError) -> dict:
    """The JSON of a request that could not be scored at all (a bad task, a sandbox that is down)."""
    return {"version": REWARD_VERSION, "task": task_key, "scored": False, "tier": None, "reward": None,
            "error": str(exc)}
