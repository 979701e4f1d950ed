"""One vocabulary for verification (harness/ladder.py): a verdict written before `steps` (with
`stages` and a top-level `stage`) is read as `steps`, `failed_step` and the failed step's `check`,
by ladder.read_verdict wherever one is handed in and by migration 0006 for the stored ones."""
from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest

from opforge.harness import ladder
from opforge.harness.ladder import read_verdict, step
from opforge.registry import Registry
from opforge.registry.db import make_engine, migrate
from opforge.registry.levels import step_rows

ROOT = Path(__file__).resolve().parents[1]
OLD = json.loads((ROOT / "tests/data/verdict_softmax_cpu.json").read_text())  # as a harness before the ladder wrote it
LEVELS = "0005_evaluation_levels"  # the revision before steps
CPU = "cpu/x86_64/triton-interpreter"
PASSED = step("passed", "opforge-static", "0.1", 0.01)


def frozen_rules():
    """Migration 0006's own copy of the rules (a module whose name starts with a digit)."""
    path = ROOT / "opforge/registry/migrations/versions/0006_evaluation_steps.py"
    spec = importlib.util.spec_from_file_location("evaluation_steps", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.to_steps


def test_an_old_correct_verdict_reads_with_no_failed_step_and_nothing_else_changed():
    assert OLD["stage"] == "anticheat" and "steps" not in OLD  # the fixture is in the old keys
    v = read_verdict(OLD)
    assert (v["failed_step"], v["steps"], ladder.failed_check(v)) == (None, {}, None)
    assert not {"stage", "stages"} & v.keys() and ladder.exit_code(v) == 0
    assert {k: x for k, x in v.items() if k not in ("steps", "failed_step")} == {
        k: x for k, x in OLD.items() if k != "stage"}
    assert OLD["stage"] == "anticheat"  # the verdict handed in is left as it was
    assert read_verdict(v) is v  # one in today's keys is returned as it is


@pytest.mark.parametrize("stage, reason, device, failed, check", [
    ("compare", "mismatch: variant 0: max abs err 3.1e-02 at [3, 7] (atol 1e-04)", "cpu", "cpu_run", "compare"),
    ("anticheat", "torch-compute: aten.exp in forward", "cuda", "device_run", "anticheat"),
    ("run", "timeout: the job exceeded its time limit (600 s)", "cpu", "cpu_run", "run"),
    ("load", "syntax-error: line 3: invalid syntax", "cpu", "static", "syntax"),
    ("load", "load-error: ModelNew() raised", "cpu", "cpu_run", "load"),
    ("static", "forbidden-import: os (line 2)", "cpu", "static", "rules"),
    ("build", "build-error: _k does not compile for sm_90", "cpu", "compile", "build"),
    ("draft", "no ```python block in the reply", "cpu", "draft", "reply"),
])
def test_an_old_failed_verdict_names_the_step_its_stage_meant_once(stage, reason, device, failed, check):
    old = OLD | {"correct": False, "stage": stage, "reasons": [reason, "second"], "device": device}
    v = read_verdict(old)
    assert (v["failed_step"], ladder.failed_check(v)) == (failed, check)
    assert v["steps"] == {failed: step("failed", reason=reason, check=check)}
    assert ladder.exit_code(v) == 1 and v["reasons"] == [reason, "second"]
    assert [row.line() for row in step_rows(old)] == [f"{failed}: failed the {check} check: {reason}"]
    assert frozen_rules()(old) == v  # migration 0006 rewrites a stored one the same way


def test_a_ladder_era_verdict_keeps_its_records_and_names_the_first_failed_one():
    front = step("failed", "bishengir-compile", "0.9", 1.5, "build-error: _k fails the HIVM pipeline")
    stages = {"static": PASSED, "frontend_compile": front, "cpu_run": step("failed", reason="later"),
              "compile": step("skipped", "hivmc", reason="not reached: the frontend_compile stage failed")}
    old = {"correct": False, "stage": "build", "reasons": [front["reason"]], "level": "static", "stages": stages}
    v = read_verdict(old)
    assert v["failed_step"] == "frontend_compile" and v["steps"]["frontend_compile"] == front | {"check": "build"}
    assert {k: r for k, r in v["steps"].items() if k != "frontend_compile"} == {
        k: r for k, r in stages.items() if k != "frontend_compile"}
    assert frozen_rules()(old) == v
    syntax = {"correct": False, "stage": "load", "reasons": ["syntax-error: line 1"],
              "stages": {"static": step("failed", "opforge-static", None, 0.0, "syntax-error: line 1")}}
    assert ladder.failed_check(read_verdict(syntax)) == "syntax"


def test_an_old_unverifiable_verdict_has_no_failed_step_and_still_exits_3():
    stages = {"static": PASSED, "compile": step("skipped", "nvcc", reason="nvcc not found"),
              "cpu_run": step("skipped", reason="nvcc not found")}
    old = {"correct": False, "stage": "build", "reasons": ["unverifiable: nvcc not found"], "stages": stages}
    v = read_verdict(old)
    assert v["failed_step"] is None and v["steps"] == stages and ladder.exit_code(v) == 3
    assert frozen_rules()(old) == v


def test_the_registry_stores_an_old_verdict_in_todays_keys(tmp_path):
    with Registry(tmp_path / "r.db") as reg:
        cand = reg.record_candidate(reg.record_spec("softmax", "ops/softmax.py", "s"), "k", "triton", "user")
        reg.record_evaluation(cand, CPU, {}, OLD | {"correct": False, "stage": "compare", "reasons": ["mismatch: x"]})
        (ev,) = reg.get_candidate(cand).evaluations
        (row,) = reg.list_kernels()
    assert (ev.failed_step, ev.failed_check, row.failed_step, row.failed_check) == ("cpu_run", "compare") * 2
    assert ev.verdict["steps"]["cpu_run"]["reason"] == "mismatch: x" and not {"stage", "stages"} & ev.verdict.keys()


# --- migration 0006, from the revision before it ---------------------------------------------------

def migrate_file(path: Path, revision: str, downgrade: bool = False) -> None:
    engine = make_engine(path)
    try:
        migrate(engine, path, revision, downgrade=downgrade)
    finally:
        engine.dispose()


SYNTAX_STAGES = {"static": step("failed", "opforge-static", "0.1", 0.01, "syntax-error: line 3"),
                 "compile": step("skipped", reason="not reached: the static stage failed")}
UNVERIFIABLE_STAGES = {"static": PASSED, "compile": step("skipped", "nvcc", reason="nvcc not found"),
                       "cpu_run": step("skipped", reason="nvcc not found")}
SEEDED = [  # (id, correct, the `stage` column, the stored verdict) as 0005 stored them
    (1, 1, "anticheat", OLD),
    (2, 0, "compare", {"correct": False, "stage": "compare", "reasons": ["mismatch: y"], "device": "cuda"}),
    (3, 0, "load", {"correct": False, "stage": "load", "reasons": ["syntax-error: line 3"], "stages": SYNTAX_STAGES}),
    (4, 0, "build", {"correct": False, "stage": "build", "reasons": ["unverifiable: nvcc not found"],
                     "stages": UNVERIFIABLE_STAGES}),
    (5, 0, "compile", {}),  # the verdict told nothing: the columns say
]


def seed_at_levels(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO specs VALUES (1, 'softmax', 'ops/softmax.py', 'abc', 'src', '2025-01-01 00:00:00')")
        conn.execute("INSERT INTO candidates (id, spec_id, source, sha256, backend, drafter, created_at)"
                     " VALUES (1, 1, 'k', 'def', 'triton', 'user', '2025-01-01 00:00:00')")
        for ev_id, correct, stage, verdict in SEEDED:
            reasons = verdict.get("reasons", ["boom"])
            conn.execute("INSERT INTO evaluations (id, candidate_id, hardware, hardware_info, correct, stage, reasons,"
                         " verdict, timings, created_at) VALUES (?, 1, ?, '{}', ?, ?, ?, ?, NULL, '2025-01-02 00:00:00')",
                         (ev_id, CPU, correct, stage, json.dumps(reasons), json.dumps(verdict)))


def columns(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[1] for row in conn.execute("PRAGMA table_info(evaluations)")}


def test_upgrade_from_levels_rewrites_every_stored_verdict_into_steps(tmp_path):
    path = tmp_path / "before_steps.db"
    migrate_file(path, LEVELS)
    seed_at_levels(path)
    with Registry(path) as reg:
        evaluations = reg.get_candidate(1).evaluations
    assert "stage" not in columns(path) and {"failed_step", "failed_check"} <= columns(path)
    assert [(e.failed_step, e.failed_check) for e in evaluations] == [
        (None, None), ("device_run", "compare"), ("static", "syntax"), (None, None), ("compile", "build")]
    assert all(not {"stage", "stages"} & e.verdict.keys() for e in evaluations)
    assert evaluations[2].verdict["steps"] == SYNTAX_STAGES | {"static": SYNTAX_STAGES["static"] | {"check": "syntax"}}
    assert evaluations[4].verdict["steps"]["compile"]["reason"] == "boom"
    for (_, _, _, stored), ev in zip(SEEDED[:4], evaluations):  # the frozen rules agree with today's reader
        assert ev.verdict == read_verdict(stored)


def test_downgrade_to_levels_writes_the_old_keys_back_and_up_again(tmp_path):
    path = tmp_path / "steps.db"
    failed = {"correct": False, "failed_step": "cpu_run", "reasons": ["mismatch: x"], "level": "compiled",
              "steps": {"static": PASSED, "cpu_run": step("failed", reason="mismatch: x", check="compare")}}
    with Registry(path) as reg:
        cand = reg.record_candidate(reg.record_spec("softmax", "ops/softmax.py", "s"), "k", "triton", "user")
        reg.record_evaluation(cand, CPU, {}, failed)
        reg.record_evaluation(cand, CPU, {}, {"correct": True, "failed_step": None, "reasons": [], "steps": {}})
    migrate_file(path, LEVELS, downgrade=True)
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT stage, verdict FROM evaluations ORDER BY id").fetchall()
    assert [stage for stage, _ in rows] == ["compare", "anticheat"]
    old = json.loads(rows[0][1])
    assert (old["stage"], old["stages"]["cpu_run"]["reason"]) == ("compare", "mismatch: x")
    assert not {"steps", "failed_step"} & old.keys()
    with Registry(path) as reg:
        first, second = reg.get_candidate(cand).evaluations
    assert (first.failed_step, first.failed_check, second.failed_step) == ("cpu_run", "compare", None)
    assert first.verdict["steps"] == failed["steps"]
