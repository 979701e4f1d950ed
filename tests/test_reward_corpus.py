"""Anti-hacking evidence (issue 37): the exploit corpus (tests/data/exploits.json) scored by the reward
through the sandbox, as a training loop sends it (raw kernel text, static checks on). No exploit may
score above `wrong` (its expected tier, `cheat` for most, is asserted too); each backend's correct
control scores `correct`; broken code gets `unusable`/`static`/`build`; the same kernel and seed replay
to the same reward.

Every cheat class is scored here, each (backend, class) by its cheapest row (the manifest's `test`
rows) unless its rows say why not (`untested`: a shared run-time guard tested on Triton, a hang that
costs its time limit, a fault like a tested one); benchmarks/reward_corpus.py scores every row
(benchmarks/results/reward_corpus.json). Two xdist groups of about equal cost, one Scorer each: Triton
on one worker, the other backends on the other (32 s and 28 s; 38 s wall for the file with -n 2 on 2
cores shared at load ~4); a kernel two tests ask about is scored once."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import ROOT, require_ascend
from opforge.reward.score import Scorer, replayable
from opforge.reward.tiers import rank

sys.path.insert(0, str(ROOT / "benchmarks"))
from reward_corpus import MANIFEST, SEED, score, task_of  # noqa: E402

ROWS = json.loads(MANIFEST.read_text(encoding="utf-8"))
EXPLOITS = ROWS["exploits"]
TESTED = [row for row in EXPLOITS if row.get("test")]
CONTROLS = {row["backend"]: row for row in ROWS["controls"]}
SECOND_WORKER = ("cuda", "triton_ascend", "ascendc")
SCORED: dict[tuple, dict] = {}


def group(backend: str):
    return pytest.mark.xdist_group("reward_corpus_b" if backend in SECOND_WORKER else "reward_corpus_a")


def cases(rows: list[dict]):
    return [pytest.param(row, id="-".join([row["backend"], *filter(None, [row.get("cls")]), Path(row["kernel"]).stem]),
                         marks=group(row["backend"])) for row in rows]


@pytest.fixture(scope="module")
def scorer():
    """One seeded trial per input variant (the reward's default is 2): every guard, variant, stress case
    and repeated call still runs, and the test stays in its time budget."""
    with Scorer(trials=1) as s:
        yield s


def scored(scorer: Scorer, row: dict, seed: int = SEED) -> dict:
    """The row's reward, scored once per process (the replay test scores afresh)."""
    if row["backend"] == "triton_ascend":
        require_ascend()
    key = (row["kernel"], row["spec"], row["backend"], seed)
    if key not in SCORED:
        SCORED[key] = score(scorer, row, seed)
    return SCORED[key]


def test_the_manifest_names_real_files_and_tests_every_class():
    """Every row's kernel and spec exist; every cheat class is tested on some backend, and every
    (backend, class) has one tested row or says on each row why not; every expected tier is at most
    `wrong` (an exploit expected above it would be a hole written down as fine)."""
    for row in EXPLOITS + list(CONTROLS.values()):
        assert (ROOT / row["kernel"]).is_file() and (ROOT / row["spec"]).is_file(), row
        task_of(row)  # its spec edits apply
    pairs = {(r["backend"], r["cls"]) for r in EXPLOITS}
    tested = [(r["backend"], r["cls"]) for r in TESTED]
    assert len(tested) == len(set(tested))
    assert all(r.get("untested") for r in EXPLOITS if (r["backend"], r["cls"]) not in tested)
    assert {r["cls"] for r in EXPLOITS if r["kind"] == "cheat"} <= {cls for _, cls in tested}
    assert pairs - set(tested) == {(r["backend"], r["cls"]) for r in EXPLOITS if r.get("untested")}
    assert all(r["tier"] is None or rank(r["tier"]) <= rank("wrong") for r in EXPLOITS)
    assert set(CONTROLS) == {"triton", "cuda", "triton_ascend", "ascendc"}


@pytest.mark.parametrize("row", cases(TESTED))
def test_an_exploit_never_scores_above_wrong(scorer, row):
    reward = scored(scorer, row)
    assert reward["tier"] is None or rank(reward["tier"]) <= rank("wrong"), (reward["tier"], reward["reasons"])
    assert reward["reward"] is None or reward["reward"] < 1.0
    assert reward["tier"] == row["tier"], (row["kernel"], reward["tier"], reward["reasons"][:2])


@pytest.mark.parametrize("row", cases(list(CONTROLS.values())))
def test_each_backends_correct_control_scores_correct(scorer, row):
    reward = scored(scorer, row)
    assert (reward["tier"], reward["reward"]) == ("correct", 1.0), reward["reasons"]


SYNTAX = "import torch\n\nclass ModelNew(torch.nn.Module:\n    pass\n"


@pytest.mark.parametrize("backend", [pytest.param(b, marks=group(b)) for b in ("triton", "cuda", "triton_ascend", "ascendc")])
def test_broken_code_is_unusable(scorer, backend):
    """A file that does not parse, and a reply with no code, on every backend: nothing runs."""
    row = CONTROLS[backend]
    if backend == "triton_ascend":
        require_ascend()
    task = task_of(row)
    assert scorer.score(task, SYNTAX, seed=1, raw=True)["tier"] == "unusable"
    reply = scorer.score(task, "I cannot write this kernel, sorry.", seed=1)
    assert (reply["tier"], reply["failed_step"]) == ("unusable", "draft")


# backend, kernel, spec, tier: a static refusal that is no cheat, and a compile error
BROKEN = [
    ("triton", "tests/data/kernels/hostile_interp_np_dlpack.py", "tests/data/specs/tiny_softmax.py", "static"),
    ("triton", "tests/data/kernels/interpreter_only.py", "tests/data/specs/tiny_softmax.py", "build"),
    ("cuda", "tests/data/kernels/hostile_cuda_emulator_detect.py", "tests/data/specs/tiny_softmax.py", "static"),
    ("cuda", "tests/data/kernels/cuda_syntax_error.py", "tests/data/specs/tiny_softmax.py", "build"),
    ("triton_ascend", "tests/data/triton_ascend/cuda_libdevice.py", "ops/softmax.py", "static"),
    ("ascendc", "tests/data/hostile_ascend/ascendc_ub_constexpr_fn.py", "tests/data/ascendc/add_spec.py", "static"),
]


@pytest.mark.parametrize("backend, kernel, spec, expected", [
    pytest.param(*case, marks=group(case[0]), id=f"{case[0]}-{case[3]}") for case in BROKEN])
def test_static_refusals_and_build_errors_get_their_tiers(scorer, backend, kernel, spec, expected):
    reward = scored(scorer, {"kernel": kernel, "spec": spec, "backend": backend})
    assert reward["tier"] == expected, reward["reasons"][:2]


@group("triton")
def test_the_same_kernel_and_seed_replay_to_the_same_reward_and_a_new_seed_is_recorded(scorer):
    """A wrong kernel: its reasons carry the seeded inputs' errors, so a replay is compared to the digit."""
    row = next(r for r in TESTED if r["kernel"].endswith("/hostile_gelu_tanh.py"))
    first, again = scored(scorer, row), score(scorer, row, SEED)
    assert first["tier"] == "wrong" and first["seed"] == SEED and "max abs err" in first["reasons"][0]
    assert replayable(first) == replayable(again)
    other = score(scorer, row, SEED + 1)
    assert other["seed"] == SEED + 1 and other["tier"] == "wrong"
    assert replayable(other) != replayable(first)
