"""A Gymnasium environment over the reward: one episode per task, one turn per answer.

    import gymnasium
    import opforge.reward.gym_env  # registers opforge/Kernel-v0 (see opforge/reward/__init__.py)
    env = gymnasium.make("opforge/Kernel-v0", max_turns=4)
    prompt, info = env.reset(seed=0, options={"spec": "ops/softmax.py"})
    prompt, reward, terminated, truncated, info = env.step(model_reply)

An observation is the whole prompt of the turn as text: the user message of the agent loop's own
prompt (reward/prompt.py: the spec, its sizes, the target, retrieved knowledge, and from the second
turn every earlier attempt with its verdict's feedback). `info["messages"]` holds the chat list
(the backend's system contract, then that user message) for chat models. A turn's prompt is complete
in itself: a policy reads only the latest one.

An action is the model's reply (text; the kernel is extracted from it). The reward is the tier's
number (tiers.py), `info["reward"]` the reward JSON less its verdict and wall time (score.replayable:
the same for the same seed and answer, as Gymnasium's checker asks of info), `info["verdict"]` the
verdict (with the wall times of its steps).
The episode ends with `terminated` on a `correct` answer and, unless end_on_cheat=False, on a `cheat`
(its feedback would teach the policy which rule caught it); with `truncated` after max_turns answers,
or at once when the answer is unscored here (`info["scored"]` False, reward 0.0 that a trainer must
mask: nothing on this machine checked the numerics, and no later turn of the task can be checked
either).

Seeds: turn k's scoring seed is the k-th draw of the episode's generator (reset(seed=...)), whatever
the answers were, so the same episode seed and the same kernel give the same reward (`score.replayable`)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import gymnasium
from gymnasium import spaces

from opforge.agents.drafters.base import Attempt
from opforge.agents.drafters.extract import extract
from opforge.backends import DEFAULT
from opforge.harness.errors import OpforgeError, SpecError
from opforge.reward import dataset, prompt, register_env
from opforge.reward.score import TRIALS, Scorer, Task, replayable

MAX_TURNS = 4  # the agent loop repairs a failure in about 2-3 rounds; a 4th answer rarely adds a first success
SEED_BOUND = 2**31 - 10_000  # score.py's own range: the harness adds per-case offsets to a seed
# Text spaces: every character of Unicode's basic plane (what a spec, a kernel and feedback are
# written in; 63,488 characters, ~0.05 s per space). A reply with a character beyond it (an emoji)
# is still scored: `step` takes any str, the action space describes. A prompt with four 400-line
# attempts is ~80,000 characters; an action sample (env_checker) averages half of ACTION_CHARS.
CHARSET = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c < 0xE000)
OBSERVATION_CHARS = 1 << 22
ACTION_CHARS = 1 << 17
OPTIONS = ("spec", "op", "backend", "knowledge")


@dataclass
class _Episode:
    task: Task
    knowledge: tuple
    hardware: str
    sizes: dict
    attempts: list = field(default_factory=list)
    over: bool = False


class KernelEnv(gymnasium.Env):
    """One task per episode (options["spec"] at reset, else the constructor's `spec`: a spec file's
    path, its source text with options["op"], a score.Task, or a dataset row's ground truth), up to
    max_turns answers. Owns a Scorer (a warm sandbox): close() stops it. Not thread-safe."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, spec: str | Path | Task | None = None, op: str | None = None, backend: str = DEFAULT,
                 device: str | None = "cpu", trials: int = TRIALS, sandbox: str | None = None,
                 max_turns: int = MAX_TURNS, knowledge: int = prompt.KNOWLEDGE_K, end_on_cheat: bool = True,
                 render_mode: str | None = None) -> None:
        if not isinstance(max_turns, int) or max_turns < 1:
            raise OpforgeError(f"max_turns must be a positive integer, not {max_turns!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise OpforgeError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        self.defaults = {"spec": spec, "op": op, "backend": backend, "knowledge": knowledge}  # reset's options win
        self.max_turns, self.end_on_cheat, self.render_mode = max_turns, end_on_cheat, render_mode
        self.observation_space = spaces.Text(OBSERVATION_CHARS, min_length=0, charset=CHARSET)
        self.action_space = spaces.Text(ACTION_CHARS, min_length=0, charset=CHARSET)
        self.scorer = Scorer(device=device, trials=trials, sandbox=sandbox)
        self._episode: _Episode | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        self._episode = None
        settings = self._settings(options)
        task = as_task(settings["spec"], settings["op"], (options or {}).get("backend"), self.defaults["backend"])
        spec, hardware = self.scorer.prepared(task)  # SpecError / BackendUnavailable: one line, before any turn
        self._episode = _Episode(task, prompt.knowledge(task, settings["knowledge"]), hardware.fingerprint,
                                 dict(spec.sizes_used))
        return self._observation(), self._info()

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        episode = self._episode
        if episode is None or episode.over:
            raise OpforgeError("the episode is over (or never began): call reset() before step()")
        seed = int(self.np_random.integers(0, SEED_BOUND))  # drawn every turn, whatever the answer: replayable
        scored = self.scorer.score(episode.task, action, seed=seed)
        episode.attempts.append(attempt_of(action, scored))
        tier = scored["tier"]
        terminated = tier == "correct" or (self.end_on_cheat and tier == "cheat")
        truncated = not terminated and (tier is None or len(episode.attempts) >= self.max_turns)
        episode.over = terminated or truncated
        reward = float(scored["reward"]) if scored["scored"] else 0.0
        info = self._info() | {"reward": replayable(scored),  # the same for the same seed and answer (check_env asks)
                               "verdict": scored["verdict"], "scored": scored["scored"], "tier": tier}
        return self._observation(), reward, terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self._episode is not None:
            return self._observation()
        return None

    def close(self) -> None:
        self.scorer.close()  # idempotent: a second close is a no-op
        super().close()

    def _settings(self, options: dict | None) -> dict:
        options = {} if options is None else options
        if not isinstance(options, dict):
            raise OpforgeError(f"reset options must be a dict, not {type(options).__name__}")
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise OpforgeError(f"unknown reset option(s) {', '.join(map(repr, unknown))} (known: {', '.join(OPTIONS)})")
        settings = self.defaults | {k: v for k, v in options.items() if v is not None}
        if settings["spec"] is None:
            raise OpforgeError('no task: pass reset(options={"spec": PATH or source text or Task}) '
                               "or KernelEnv(spec=...)")
        k = settings["knowledge"]
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise OpforgeError(f"knowledge must be a count of items >= 0, not {k!r}")
        return settings

    def _messages(self) -> list[dict]:
        e = self._episode
        return prompt.messages(e.task, tuple(e.attempts), e.knowledge, hardware=e.hardware, sizes=e.sizes)

    def _observation(self) -> str:
        return self._messages()[-1]["content"]

    def _info(self) -> dict:
        e = self._episode
        return {"messages": self._messages(), "task": e.task.key, "op": e.task.op, "backend": e.task.backend,
                "turn": len(e.attempts), "max_turns": self.max_turns}


def as_task(spec, op: str | None, backend: str | None, default: str = DEFAULT) -> Task:
    """A Task from a Task or a dataset row's ground truth (JSON text or dict; its own backend unless
    `backend` is given), a spec file's path, or a spec's source text (which needs `op`); `default` is
    the backend when none is given."""
    if isinstance(spec, dict) or (isinstance(spec, str) and spec.lstrip().startswith("{")):
        spec = dataset.task_of(spec)
    if isinstance(spec, Task):
        return replace(spec, backend=backend) if backend else spec
    backend = backend or default
    if isinstance(spec, Path) or (isinstance(spec, str) and "\n" not in spec):
        path = Path(spec)
        if not path.is_file():
            raise SpecError(f"{path}: spec file not found")
        return Task.from_path(path, backend)
    if isinstance(spec, str):
        if not op:
            raise SpecError('a spec given as source text needs its op name: options={"spec": TEXT, "op": NAME}')
        return Task(spec, op, backend, task_id=f"opforge/custom/{op}")
    raise SpecError(f"a spec is a path, source text, a Task or a ground truth, not {type(spec).__name__}")


def attempt_of(answer, scored: dict) -> Attempt:
    """The answer as the next prompt quotes it: the kernel that ran, else what the reply held instead
    (with the line where parsing stopped)."""
    found = extract(answer if isinstance(answer, str) else "")
    if found.source is not None:
        return prompt.attempt(found.source, scored)
    return replace(prompt.attempt(found.rejected, scored), line=found.line)


register_env()
