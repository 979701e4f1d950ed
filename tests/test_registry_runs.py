"""Runs, LLM calls, trajectories and verified examples in the Registry, on real SQLite files."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from opforge.harness.ladder import step
from opforge.registry import Registry, RegistryError, RunRow, new_run_key

CPU = "cpu/x86_64/triton-interpreter"
ADD_SRC = "def reference(x, y):\n    return x + y\n"
MUL_SRC = "def reference(x, y):\n    return x * y\n"


@dataclass(frozen=True)
class Call:
    """Stands in for agents.drafters.base.LLMCall: the registry reads attributes, not the type."""

    model: str = "qwen2.5-coder-7b"
    temperature: float = 0.7
    messages: tuple[dict[str, Any], ...] = (
        {"role": "system", "content": "Write a Triton kernel."},
        {"role": "user", "content": "spec: add"},
    )
    reply: str = "```python\nclass ModelNew: ...\n```"
    prompt_tokens: int = 120
    completion_tokens: int = 80
    latency_s: float = 1.25
    cost_usd: float | None = None
    error: str | None = None


def verdict(correct: bool = True, speedup: float | None = None,
            reasons: list[str] | None = None) -> dict[str, Any]:
    reasons = reasons if reasons is not None else ([] if correct else ["max abs err 1.5 > atol"])
    return {
        "correct": correct,
        "failed_step": None if correct else "cpu_run",
        "steps": {} if correct else {"cpu_run": step("failed", reason=reasons[0], check="compare")},
        "reasons": reasons,
        "timings": None if speedup is None else {"kernel_ms": 1.0 / speedup, "speedup_eager": speedup},
    }


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    with Registry(tmp_path / "reg" / "opforge.db") as registry:
        yield registry


@pytest.fixture
def add_spec(reg: Registry) -> int:
    return reg.record_spec("add", "ops/add.py", ADD_SRC)


def start_run(reg: Registry, spec_id: int, op: str = "add", key: str | None = None) -> RunRow:
    return reg.create_run(key or new_run_key(), op, spec_id, "triton", "llm", CPU, {"budget": 4})


def evaluated(reg: Registry, spec_id: int, source: str, *verdicts: dict[str, Any], **run: Any) -> int:
    cand = reg.record_candidate(spec_id, source, "triton", "llm", **run)
    for v in verdicts:
        reg.record_evaluation(cand, CPU, {}, v)
    return cand


# -- runs ---------------------------------------------------------------------


def test_new_run_keys_are_short_dated_and_distinct() -> None:
    keys = {new_run_key() for _ in range(50)}
    assert len(keys) == 50
    assert all(re.fullmatch(r"r-\d{8}-[0-9a-f]{6}", k) for k in keys)
    assert Registry.new_run_key().startswith("r-")


def test_run_lifecycle(reg: Registry, add_spec: int) -> None:
    run = reg.create_run("r-20261129-ab12cd", "add", add_spec, "triton", "llm", CPU,
                         {"budget": 4, "models": ["m"]})
    assert (run.status, run.tokens, run.finished_at, run.best_candidate_id) == ("running", 0, None, None)
    assert (run.op, run.spec_id, run.config) == ("add", add_spec, {"budget": 4, "models": ["m"]})
    assert run.started_at.tzinfo is not None
    assert reg.get_run("r-20261129-ab12cd") == run

    reg.update_run(run.run_key, add_tokens=200)
    still = reg.update_run(run.run_key, add_tokens=50)
    assert (still.status, still.tokens, still.finished_at) == ("running", 250, None)

    best = evaluated(reg, add_spec, "k", verdict(speedup=2.0), run_id=run.id, round=0)
    done = reg.update_run(run.run_key, status="done", best_candidate_id=best, stop_reason="speedup reached")
    assert (done.status, done.best_candidate_id, done.stop_reason, done.tokens) == (
        "done", best, "speedup reached", 250)
    assert done.finished_at is not None and done.finished_at >= done.started_at
    assert reg.get_run(run.run_key) == done


def test_failing_and_resuming_a_run(reg: Registry, add_spec: int) -> None:
    run = start_run(reg, add_spec)
    failed = reg.update_run(run.run_key, status="failed", error="DrafterError: endpoint refused")
    assert (failed.status, failed.error) == ("failed", "DrafterError: endpoint refused")
    assert failed.finished_at is not None
    # A later status change keeps the time the run first stopped.
    assert reg.update_run(run.run_key, status="cancelled").finished_at == failed.finished_at
    resumed = reg.update_run(run.run_key, status="running")
    assert (resumed.status, resumed.finished_at, resumed.error, resumed.stop_reason) == (
        "running", None, None, None)


def test_unknown_run_key(reg: Registry) -> None:
    assert reg.get_run("r-00000000-000000") is None
    with pytest.raises(RegistryError, match="run r-nope does not exist"):
        reg.update_run("r-nope", status="done")
    with pytest.raises(RegistryError, match="run r-nope does not exist"):
        reg.run_candidates("r-nope")


def test_run_inputs_are_checked(reg: Registry, add_spec: int) -> None:
    run = start_run(reg, add_spec, key="r-dup")
    with pytest.raises(RegistryError, match="run r-dup already exists"):
        start_run(reg, add_spec, key="r-dup")
    with pytest.raises(RegistryError, match="spec 99 does not exist"):
        start_run(reg, 99)
    with pytest.raises(RegistryError, match="config must be a dict"):
        reg.create_run("r-x", "add", add_spec, "triton", "llm", CPU, ["budget"])  # type: ignore[arg-type]
    with pytest.raises(RegistryError, match="status must be one of"):
        reg.update_run(run.run_key, status="finished")
    with pytest.raises(RegistryError, match="add_tokens"):
        reg.update_run(run.run_key, add_tokens=-1)
    with pytest.raises(RegistryError, match="candidate 42 does not exist"):
        reg.update_run(run.run_key, best_candidate_id=42)
    mul = reg.record_spec("mul", "ops/mul.py", MUL_SRC)
    other = reg.record_candidate(mul, "k", "triton", "llm")
    with pytest.raises(RegistryError, match=f"not a kernel of run {run.run_key}'s spec"):
        reg.update_run(run.run_key, best_candidate_id=other)
    assert reg.get_run(run.run_key) == run


def test_database_refuses_an_unknown_run_status(reg: Registry, add_spec: int) -> None:
    # The invariant holds even for writers that bypass Registry.update_run.
    run = start_run(reg, add_spec)
    with sqlite3.connect(reg.path) as conn, pytest.raises(sqlite3.IntegrityError, match="ck_runs_status"):
        conn.execute("UPDATE runs SET status = 'paused' WHERE id = ?", (run.id,))


def test_list_runs_newest_first_by_op(reg: Registry, add_spec: int) -> None:
    mul = reg.record_spec("mul", "ops/mul.py", MUL_SRC)
    first = start_run(reg, add_spec)
    other = start_run(reg, mul, op="mul")
    last = start_run(reg, add_spec)
    assert [r.id for r in reg.list_runs()] == [last.id, other.id, first.id]
    assert [r.id for r in reg.list_runs(op="add")] == [last.id, first.id]
    assert [r.id for r in reg.list_runs(limit=1)] == [last.id]
    with pytest.raises(RegistryError, match="limit"):
        reg.list_runs(limit=0)


# -- candidates of a run ------------------------------------------------------


def test_candidates_carry_their_run_and_round(reg: Registry, add_spec: int) -> None:
    run = start_run(reg, add_spec)
    a = evaluated(reg, add_spec, "A", verdict(correct=False), verdict(speedup=1.5), run_id=run.id, round=0)
    b = evaluated(reg, add_spec, "B", verdict(correct=False, reasons=["nan in output"]),
                  run_id=run.id, round=1)
    outside = reg.record_candidate(add_spec, "C", "triton", "user")

    detail = reg.get_candidate(b)
    assert detail is not None and (detail.run_id, detail.round) == (run.id, 1)
    rows = reg.run_candidates(run.run_key)
    assert [(r.candidate_id, r.run_id, r.round) for r in rows] == [(a, run.id, 0), (b, run.id, 1)]
    assert (rows[0].correct, rows[0].speedup_eager) == (True, 1.5)
    assert (rows[1].correct, rows[1].first_reason) == (False, "nan in output")
    listed = {r.candidate_id: (r.run_id, r.round) for r in reg.list_kernels()}
    assert listed[outside] == (None, None)


def test_redrafting_an_existing_candidate_keeps_its_first_run(reg: Registry, add_spec: int) -> None:
    first = start_run(reg, add_spec)
    second = start_run(reg, add_spec)
    cand = reg.record_candidate(add_spec, "same kernel", "triton", "llm", run_id=first.id, round=2)
    assert reg.record_candidate(add_spec, "same kernel", "triton", "llm", run_id=second.id, round=0) == cand
    assert [r.candidate_id for r in reg.run_candidates(first.run_key)] == [cand]
    assert reg.run_candidates(second.run_key) == []
    assert (reg.get_candidate(cand).run_id, reg.get_candidate(cand).round) == (first.id, 2)


def test_candidate_run_references_are_checked(reg: Registry, add_spec: int) -> None:
    with pytest.raises(RegistryError, match="run 7 does not exist"):
        reg.record_candidate(add_spec, "k", "triton", "llm", run_id=7)
    with pytest.raises(RegistryError, match="round"):
        reg.record_candidate(add_spec, "k", "triton", "llm", round=-1)
    assert reg.list_kernels() == []


def test_latest_evaluation(reg: Registry, add_spec: int) -> None:
    cand = evaluated(reg, add_spec, "k", verdict(speedup=1.0), verdict(correct=False, reasons=["late"]))
    latest = reg.latest_evaluation(cand)
    assert latest is not None and (latest.correct, latest.reasons) == (False, ["late"])
    assert reg.latest_evaluation(reg.record_candidate(add_spec, "never run", "triton", "llm")) is None
    assert reg.latest_evaluation(999) is None


# -- LLM calls and trajectories ------------------------------------------------


def test_llm_calls_make_trajectories_with_their_candidates_feedback(reg: Registry, add_spec: int) -> None:
    run = start_run(reg, add_spec)
    # Round 0: the call is recorded before its reply is verified, then linked to the candidate.
    call = reg.record_llm_call(run.id, None, 0, Call())
    cand = evaluated(reg, add_spec, "A", verdict(correct=False, reasons=["old"]),
                     verdict(correct=False, reasons=["max abs err 3.1e-2 at [17, 430] (atol 1e-4)", "2nd"]),
                     run_id=run.id, round=0)
    reg.link_llm_call(call, cand)
    # Round 1: a reply without a kernel; its error is the feedback.
    reg.record_llm_call(run.id, None, 1, Call(reply="I cannot.", error="no ModelNew in reply"))

    first, second = reg.trajectories()
    assert first == {
        "run": run.run_key, "op": "add", "round": 0, "model": "qwen2.5-coder-7b", "temperature": 0.7,
        "messages": list(Call().messages), "reply": Call().reply, "candidate_id": cand,
        "feedback": ["max abs err 3.1e-2 at [17, 430] (atol 1e-4)", "2nd"], "correct": False,
        "failed_step": "cpu_run", "failed_check": "compare", "speedup_eager": None, "prompt_tokens": 120, "completion_tokens": 80,
    }
    assert (second["round"], second["candidate_id"], second["feedback"]) == (1, None, ["no ModelNew in reply"])
    assert (second["correct"], second["failed_step"], second["failed_check"], second["reply"]) == (
        None, None, None, "I cannot.")


def test_trajectories_are_ordered_by_run_and_filtered_by_op(reg: Registry, add_spec: int) -> None:
    mul = reg.record_spec("mul", "ops/mul.py", MUL_SRC)
    add_run, mul_run = start_run(reg, add_spec), start_run(reg, mul, op="mul")
    good = evaluated(reg, mul, "M", verdict(speedup=2.5), run_id=mul_run.id, round=0)
    reg.record_llm_call(add_run.id, None, 0, Call())
    reg.record_llm_call(mul_run.id, good, 0, Call(temperature=0.0))
    reg.record_llm_call(add_run.id, None, 1, Call())
    loose = reg.record_llm_call(None, good, None, Call())  # outside any run: op from its candidate

    assert [(t["run"], t["round"]) for t in reg.trajectories()] == [
        (add_run.run_key, 0), (add_run.run_key, 1), (mul_run.run_key, 0), (None, None)]
    (mul_call, loose_call) = reg.trajectories(op="mul")
    assert (mul_call["correct"], mul_call["speedup_eager"], mul_call["feedback"]) == (True, 2.5, [])
    assert (loose_call["op"], loose_call["candidate_id"]) == ("mul", good)
    assert loose == 4
    assert reg.trajectories(op="nope") == []


def test_llm_call_inputs_are_checked(reg: Registry, add_spec: int) -> None:
    run = start_run(reg, add_spec)
    with pytest.raises(RegistryError, match="run 9 does not exist"):
        reg.record_llm_call(9, None, 0, Call())
    with pytest.raises(RegistryError, match="candidate 9 does not exist"):
        reg.record_llm_call(run.id, 9, 0, Call())
    no_tokens = SimpleNamespace(**{k: v for k, v in asdict(Call()).items() if k != "prompt_tokens"})
    with pytest.raises(RegistryError, match="LLM call lacks prompt_tokens$"):
        reg.record_llm_call(run.id, None, 0, no_tokens)  # type: ignore[arg-type]
    with pytest.raises(RegistryError, match=r"messages\[0\]"):
        reg.record_llm_call(run.id, None, 0, Call(messages=("hello",)))  # type: ignore[arg-type]
    with pytest.raises(RegistryError, match="temperature"):
        reg.record_llm_call(run.id, None, 0, Call(temperature=float("nan")))
    with pytest.raises(RegistryError, match="completion_tokens"):
        reg.record_llm_call(run.id, None, 0, Call(completion_tokens=-5))
    call = reg.record_llm_call(run.id, None, 0, Call(cost_usd=0.002))
    with pytest.raises(RegistryError, match="LLM call 99 does not exist"):
        reg.link_llm_call(99, 1)
    with pytest.raises(RegistryError, match="candidate 99 does not exist"):
        reg.link_llm_call(call, 99)
    assert len(reg.trajectories()) == 1


def test_the_drafters_llm_call_type_is_accepted(reg: Registry, add_spec: int) -> None:
    base = pytest.importorskip("opforge.agents.drafters.base")
    call = base.LLMCall(model="m", temperature=0.2, messages=({"role": "user", "content": "hi"},),
                        reply="ok", prompt_tokens=3, completion_tokens=1, latency_s=0.1)
    reg.record_llm_call(start_run(reg, add_spec).id, None, 0, call)
    (t,) = reg.trajectories()
    assert (t["messages"], t["reply"], t["prompt_tokens"]) == ([{"role": "user", "content": "hi"}], "ok", 3)


# -- verified examples ----------------------------------------------------------


def test_verified_examples_fastest_first_then_newest(reg: Registry, add_spec: int) -> None:
    mul = reg.record_spec("mul", "ops/mul.py", MUL_SRC)
    untimed_old = evaluated(reg, add_spec, "add untimed old", verdict())
    evaluated(reg, add_spec, "add 1.5x", verdict(speedup=1.5))
    evaluated(reg, add_spec, "add wrong", verdict(correct=False))
    evaluated(reg, mul, "mul 2x", verdict(speedup=1.0), verdict(speedup=2.0))
    evaluated(reg, mul, "mul rejected later", verdict(speedup=5.0), verdict(correct=False))
    evaluated(reg, add_spec, "add 3x", verdict(speedup=3.0))
    evaluated(reg, add_spec, "add untimed new", verdict())
    reg.record_evaluation(untimed_old, CPU, {}, verdict())  # a second correct verdict: still one example

    examples = reg.verified_examples()
    # "mul rejected later" was once correct and fast, but its latest verdict failed: no example
    assert [(op, kernel, speedup) for op, _, kernel, speedup in examples] == [
        ("add", "add 3x", 3.0), ("mul", "mul 2x", 2.0), ("add", "add 1.5x", 1.5),
        ("add", "add untimed new", None), ("add", "add untimed old", None)]
    assert {op: spec for op, spec, _, _ in examples} == {"add": ADD_SRC, "mul": MUL_SRC}
    assert [k for _, _, k, _ in reg.verified_examples(limit=2)] == ["add 3x", "mul 2x"]


def test_verified_examples_exclude_a_spec(reg: Registry, add_spec: int) -> None:
    mul = reg.record_spec("mul", "ops/mul.py", MUL_SRC)
    evaluated(reg, add_spec, "add kernel", verdict(speedup=3.0))
    evaluated(reg, mul, "mul kernel", verdict(speedup=1.0))
    add_sha = hashlib.sha256(ADD_SRC.encode()).hexdigest()
    assert reg.verified_examples(exclude_spec_sha=add_sha) == [("mul", MUL_SRC, "mul kernel", 1.0)]
    assert len(reg.verified_examples(exclude_spec_sha="0" * 64)) == 2
    with pytest.raises(RegistryError, match="limit"):
        reg.verified_examples(limit=0)


def test_verified_examples_of_a_backend_are_that_backends_only(reg: Registry, add_spec: int) -> None:
    """A run asks for its own backend's past successes: a Triton kernel is no example for CUDA,
    nor a CUDA one for Triton, and Triton-Ascend's (the same language as NVIDIA Triton, which
    retrieval cannot tell apart by its text) is no example for either."""
    for source, backend, speedup in (("add triton", "triton", 3.0), ("add cuda", "cuda", 2.0),
                                     ("add ascend", "triton_ascend", 4.0)):
        cand = reg.record_candidate(add_spec, source, backend, "llm")
        reg.record_evaluation(cand, CPU, {}, verdict(speedup=speedup))
    for backend, source in (("cuda", "add cuda"), ("triton", "add triton"), ("triton_ascend", "add ascend")):
        assert [k for _, _, k, _ in reg.verified_examples(backend=backend)] == [source], backend
    assert [k for _, _, k, _ in reg.verified_examples()] == ["add ascend", "add triton", "add cuda"]


def test_a_conditional_status_change_leaves_a_finished_run_alone(reg: Registry, add_spec: int) -> None:
    from opforge.agents.run import cancel_run
    from opforge.harness.errors import OpforgeError

    run = reg.create_run(new_run_key(), "add", add_spec, "triton", "expert", "cpu", {})
    reg.update_run(run.run_key, status="done", stop_reason="budget spent")
    with pytest.raises(OpforgeError, match="already finished \\(done\\)"):
        cancel_run(run.run_key, reg)  # a cancel that arrives as the run finishes
    with pytest.raises(RegistryError, match="is done, not running"):
        reg.update_run(run.run_key, status="failed", if_status="running")
    assert (reg.get_run(run.run_key).status, reg.get_run(run.run_key).stop_reason) == ("done", "budget spent")
