"""The Gymnasium environment (opforge/reward/gym_env.py): a multi-turn episode whose next prompt
carries the verdict's feedback, ends on a correct answer, replays from its seed; registration; the
Gymnasium API checker; bad input as one clear line. One env (one warm sandbox) for the file: three
sandbox scorings of the tiny softmax (~3-6 s each), everything else scores without a run."""
from __future__ import annotations

import subprocess
import sys

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from opforge.harness.errors import OpforgeError
from opforge.reward import ENTRY_POINT, ENV_ID
from opforge.reward.dataset import ground_truth
from opforge.reward.gym_env import KernelEnv
from opforge.reward.score import Task, replayable, reward_of
from tests.conftest import KERNELS, ROOT, TINY

pytestmark = pytest.mark.xdist_group("reward-gym")


def fenced(name: str) -> str:
    return f"Here is the kernel.\n\n```python\n{(KERNELS / name).read_text()}```\n"


@pytest.fixture(scope="module")
def env(default_sandbox):
    env = KernelEnv(spec=TINY, max_turns=3, sandbox=default_sandbox)
    yield env
    env.close()


@pytest.fixture(scope="module")
def episodes(env):
    """Episode A (seed 7): a wrong kernel, then the good one. Episode B (seed 7): the wrong kernel again."""
    first = env.reset(seed=7, options={"spec": str(TINY)})
    wrong = env.step(fenced("wrong_no_mask.py"))
    good = env.step(fenced("good.py"))
    env.reset(seed=7)
    replay = env.step(fenced("wrong_no_mask.py"))
    return {"first": first, "wrong": wrong, "good": good, "replay": replay}


def test_next_observation_carries_the_verdict_feedback(episodes):
    (obs0, info0), (obs1, reward1, terminated1, truncated1, info1) = episodes["first"], episodes["wrong"]
    assert [m["role"] for m in info0["messages"]] == ["system", "user"] and info0["messages"][1]["content"] == obs0
    assert "tiny_softmax" in obs0 and "Attempt 1" not in obs0 and info0["turn"] == 0
    assert info1["tier"] == "wrong" and 0.3 <= reward1 < 1.0 and not (terminated1 or truncated1)
    assert "Attempt 1: failed at" in obs1 and "mismatch" in obs1 and "max abs err" in obs1  # the feedback's numbers
    assert info1["reward"]["reasons"] == info1["verdict"]["reasons"] and "verdict" not in info1["reward"]
    assert info1["turn"] == 1 and info1["scored"] is True


def test_a_correct_answer_terminates_the_episode(episodes):
    obs2, reward2, terminated2, truncated2, info2 = episodes["good"]
    assert info2["tier"] == "correct" and reward2 == 1.0 and terminated2 and not truncated2
    assert "Attempt 2: correct" in obs2 and "Attempt 1: failed at" in obs2


def test_the_episode_seed_replays_the_rewards(env, episodes):
    wrong, replay = episodes["wrong"][4]["reward"], episodes["replay"][4]["reward"]
    assert wrong == replayable(wrong) == replay and episodes["wrong"][1] == episodes["replay"][1]
    seeds = []
    for seed in (7, 8, 7):  # no sandbox run: an answer with no code still draws the turn's seed
        env.reset(seed=seed)
        seeds.append(env.step("no code, only a plan")[4]["reward"]["seed"])
    assert seeds[0] == seeds[2] == wrong["seed"] != seeds[1]


def test_a_cheat_ends_the_episode_unless_told_otherwise(env):
    env.reset(seed=1)
    _, reward, terminated, truncated, info = env.step(fenced("cheat_subprocess.py"))  # a static rule: no run
    assert info["tier"] == "cheat" and reward == -1.0 and terminated and not truncated
    with pytest.raises(OpforgeError, match="call reset"):
        env.step(fenced("good.py"))  # the episode is over
    env.end_on_cheat = False
    try:
        env.reset(seed=1)
        *_, terminated, truncated, info = env.step(fenced("cheat_subprocess.py"))
        assert info["tier"] == "cheat" and not terminated and not truncated
    finally:
        env.end_on_cheat = True


def test_max_turns_truncates_and_an_unscored_verdict_is_no_number(env, monkeypatch):
    env.reset(seed=2)
    steps = [env.step("no code yet") for _ in range(env.max_turns)]
    assert [s[3] for s in steps] == [False] * (env.max_turns - 1) + [True] and not any(s[2] for s in steps)
    nothing_checked = {"correct": False, "reasons": [], "failed_step": None, "level": "compiled"}
    monkeypatch.setattr(env.scorer, "score", lambda task, answer, seed: reward_of(
        {"backend": task.backend, "seed": seed}, nothing_checked, answer, 0.0))
    env.reset(seed=2)
    _, reward, terminated, truncated, info = env.step(fenced("good.py"))
    assert info["scored"] is False and info["reward"]["reward"] is None and reward == 0.0
    assert truncated and not terminated


def test_a_spec_as_text_a_task_or_a_ground_truth(env):
    text = TINY.read_text()
    _, info = env.reset(options={"spec": text, "op": "tiny_softmax", "knowledge": 0})
    assert info["op"] == "tiny_softmax" and "## Knowledge" not in info["messages"][1]["content"]
    _, info = env.reset(options={"spec": Task(text, "tiny_softmax", task_id="suite/tiny")})
    assert info["task"] == "suite/tiny" and "## Knowledge" in info["messages"][1]["content"]
    _, info = env.reset(options={"spec": ground_truth(Task.from_path(TINY, data_source="opforge/suite"))})
    assert info["task"] == "opforge/suite/tiny_softmax" and info["backend"] == "triton"


@pytest.mark.parametrize("options, message", [
    (None, "no task"),
    ({"spec": "tests/data/specs/missing.py"}, "not found"),
    ({"spec": "import torch\nx = 1\n"}, "op name"),
    ({"spec": "import torch\nx = 1\n", "op": "broken"}, "Model"),
    ({"spec": str(TINY), "backend": "nope"}, "unknown backend"),
    ({"spec": str(TINY), "seeds": 3}, "unknown reset option"),
    ({"spec": str(TINY), "knowledge": -1}, "knowledge"),
    ({"spec": '{"format": "opforge-task/1", "op": "x"}'}, "ground_truth lacks"),
])
def test_bad_input_is_one_clear_line_at_reset(options, message):
    env = KernelEnv()
    try:
        with pytest.raises(OpforgeError, match=message) as caught:
            env.reset(options=options)
        assert "\n" not in str(caught.value)
        with pytest.raises(OpforgeError, match="call reset"):
            env.step("anything")
    finally:
        env.close()


def test_registered_under_the_opforge_namespace():
    assert gymnasium.spec(ENV_ID).entry_point == ENTRY_POINT
    made = gymnasium.make("opforge.reward.gym_env:" + ENV_ID, spec=TINY, max_turns=2)
    assert isinstance(made.unwrapped, KernelEnv) and made.unwrapped.max_turns == 2
    made.close()
    code = "import gymnasium, opforge.reward, sys; print(gymnasium.spec(sys.argv[1]).entry_point)"
    out = subprocess.run([sys.executable, "-c", code, ENV_ID], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ENTRY_POINT


def test_gymnasium_env_checker_passes(env):
    check_env(env, skip_render_check=True)
