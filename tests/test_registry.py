"""The Registry API on real SQLite files: recording, listing, promotion, concurrency."""

from __future__ import annotations

import logging
import multiprocessing
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import opforge.registry.db as registry_db
from opforge.harness.ladder import step
from opforge.registry import Registry, RegistryError, resolve_db_path

CPU = "cpu/x86_64/triton-interpreter"
H200 = "cuda/NVIDIA H200/sm_90"
SPEC_SRC = "def reference(x, y):\n    return x + y\n"


def verdict(correct: bool = True, kernel_ms: float | None = 0.5, reasons: list[str] | None = None) -> dict[str, Any]:
    reasons = reasons if reasons is not None else ([] if correct else ["max abs err 1.5 > atol"])
    return {
        "correct": correct,
        "failed_step": None if correct else "cpu_run",
        "steps": {} if correct else {"cpu_run": step("failed", reason=reasons[0], check="compare")},
        "reasons": reasons,
        "timings": None if kernel_ms is None else {"kernel_ms": kernel_ms, "speedup_eager": 2.0},
        "max_abs_err": 0.0,
    }


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    with Registry(tmp_path / "reg" / "opforge.db") as registry:
        yield registry


@pytest.fixture
def add_spec(reg: Registry) -> int:
    return reg.record_spec("add", "ops/add.py", SPEC_SRC)


def evaluated(reg: Registry, spec_id: int, source: str, *verdicts: dict[str, Any],
              hardware: str = CPU) -> int:
    cand = reg.record_candidate(spec_id, source, "triton", "expert")
    for v in verdicts:
        reg.record_evaluation(cand, hardware, {"device": hardware}, v)
    return cand


# -- recording ----------------------------------------------------------------


def test_registry_creates_missing_parent_directory(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "opforge.db"
    Registry(path).close()
    assert path.is_file()


def test_spec_is_deduplicated_by_source(reg: Registry) -> None:
    first = reg.record_spec("add", "ops/add.py", SPEC_SRC)
    assert reg.record_spec("add", "elsewhere/add.py", SPEC_SRC) == first
    assert reg.record_spec("add", "ops/add.py", SPEC_SRC + "# v2\n") != first


def test_candidate_is_deduplicated_per_spec_source_and_backend(reg: Registry, add_spec: int) -> None:
    first = reg.record_candidate(add_spec, "kernel A", "triton", "user")
    assert reg.record_candidate(add_spec, "kernel A", "triton", "llm") == first
    assert reg.record_candidate(add_spec, "kernel A", "cuda", "user") != first
    other_spec = reg.record_spec("mul", "ops/mul.py", "def reference(x, y): return x * y")
    assert reg.record_candidate(other_spec, "kernel A", "triton", "user") != first


def test_candidate_lineage_and_meta_round_trip(reg: Registry, add_spec: int) -> None:
    parent = reg.record_candidate(add_spec, "kernel A", "triton", "expert")
    child = reg.record_candidate(add_spec, "kernel B", "triton", "llm", parent_id=parent,
                                 meta={"model": "m", "attempt": 2})
    detail = reg.get_candidate(child)
    assert detail is not None
    assert (detail.parent_id, detail.meta, detail.drafter) == (parent, {"model": "m", "attempt": 2}, "llm")
    assert (detail.op, detail.spec_path, detail.source) == ("add", "ops/add.py", "kernel B")


def test_recording_against_unknown_rows_raises_registry_error(reg: Registry, add_spec: int) -> None:
    with pytest.raises(RegistryError, match="spec 999 does not exist"):
        reg.record_candidate(999, "k", "triton", "user")
    with pytest.raises(RegistryError, match="parent candidate 42 does not exist"):
        reg.record_candidate(add_spec, "k", "triton", "user", parent_id=42)
    with pytest.raises(RegistryError, match="candidate 7 does not exist"):
        reg.record_evaluation(7, CPU, {}, verdict())


def test_malformed_verdict_is_refused(reg: Registry, add_spec: int) -> None:
    cand = reg.record_candidate(add_spec, "k", "triton", "user")
    with pytest.raises(RegistryError, match="lacks failed_step"):
        reg.record_evaluation(cand, CPU, {}, {"correct": True, "reasons": []})
    with pytest.raises(RegistryError, match="must be a bool"):
        reg.record_evaluation(cand, CPU, {}, {**verdict(), "correct": "yes"})
    with pytest.raises(RegistryError, match="not JSON-serialisable"):
        reg.record_evaluation(cand, CPU, {}, {**verdict(), "tensor": object()})
    assert reg.get_candidate(cand).evaluations == ()


def test_evaluation_round_trips_the_whole_verdict(reg: Registry, add_spec: int) -> None:
    cand = reg.record_candidate(add_spec, "k", "triton", "user")
    v = {**verdict(kernel_ms=0.125), "shapes": [[1024], [4096]], "dtype": "float16",
         "nested": {"tol": {"atol": 1e-3}}}
    ev_id = reg.record_evaluation(cand, H200, {"name": "NVIDIA H200", "cc": [9, 0]}, v)
    (ev,) = reg.get_candidate(cand).evaluations
    assert ev.id == ev_id and ev.candidate_id == cand
    assert ev.verdict == v
    assert (ev.correct, ev.failed_step, ev.failed_check, ev.reasons, ev.timings) == (True, None, None, [], v["timings"])
    assert (ev.kernel_ms, ev.speedup_eager) == (0.125, 2.0)
    assert (ev.hardware, ev.hardware_info) == (H200, {"name": "NVIDIA H200", "cc": [9, 0]})
    assert ev.created_at.tzinfo is not None


def test_non_finite_numbers_are_stored_as_null(reg: Registry, add_spec: int) -> None:
    cand = reg.record_candidate(add_spec, "k", "triton", "user")
    v = {**verdict(correct=False), "max_abs_err": float("nan"),
         "timings": {"kernel_ms": float("inf")}}
    reg.record_evaluation(cand, CPU, {}, v)
    (ev,) = reg.get_candidate(cand).evaluations
    assert ev.verdict["max_abs_err"] is None
    assert ev.kernel_ms is None


def test_get_candidate_of_unknown_id_is_none(reg: Registry) -> None:
    assert reg.get_candidate(12345) is None


# -- listing ------------------------------------------------------------------


def test_list_kernels_filters_by_op_and_shows_latest_evaluation(reg: Registry, add_spec: int) -> None:
    mul = reg.record_spec("mul", "ops/mul.py", "def reference(x, y): return x * y")
    good_then_bad = evaluated(reg, add_spec, "A", verdict(kernel_ms=0.4),
                              verdict(correct=False, kernel_ms=None, reasons=["nan in output", "second"]))
    bad_then_good = evaluated(reg, add_spec, "B", verdict(correct=False), verdict(kernel_ms=0.3))
    never_run = reg.record_candidate(add_spec, "C", "triton", "llm")
    evaluated(reg, mul, "M", verdict())

    rows = reg.list_kernels(op="add")
    assert [r.candidate_id for r in rows] == [never_run, bad_then_good, good_then_bad]
    assert {r.op for r in rows} == {"add"}
    by_id = {r.candidate_id: r for r in rows}
    assert (by_id[good_then_bad].correct, by_id[good_then_bad].first_reason) == (False, "nan in output")
    assert by_id[good_then_bad].kernel_ms is None
    assert (by_id[bad_then_good].correct, by_id[bad_then_good].kernel_ms) == (True, 0.3)
    assert by_id[bad_then_good].first_reason is None and by_id[bad_then_good].hardware == CPU
    assert (by_id[never_run].correct, by_id[never_run].evaluation_id) == (None, None)
    assert len(reg.list_kernels()) == 4
    assert len(reg.list_kernels(limit=2)) == 2
    assert reg.list_kernels(op="no-such-op") == []


def test_list_kernels_marks_the_active_version(reg: Registry, add_spec: int) -> None:
    first = evaluated(reg, add_spec, "A", verdict())
    second = evaluated(reg, add_spec, "B", verdict())
    reg.promote(first)
    reg.promote(second)
    active = {r.candidate_id: r.active for r in reg.list_kernels()}
    assert active == {first: False, second: True}


def test_list_kernels_rejects_a_bad_limit(reg: Registry) -> None:
    with pytest.raises(RegistryError, match="limit"):
        reg.list_kernels(limit=0)


# -- promotion ----------------------------------------------------------------


def test_promote_needs_a_correct_evaluation(reg: Registry, add_spec: int) -> None:
    cand = evaluated(reg, add_spec, "A", verdict(correct=False), verdict(correct=False))
    with pytest.raises(RegistryError, match=f"candidate {cand} is not promotable: on .*: its latest evaluation is not correct"):
        reg.promote(cand)
    with pytest.raises(RegistryError, match="candidate 999 does not exist"):
        reg.promote(999)
    assert reg.versions() == []


def test_promote_numbers_versions_per_key_and_keeps_history(reg: Registry, add_spec: int) -> None:
    a = evaluated(reg, add_spec, "A", verdict())
    b = evaluated(reg, add_spec, "B", verdict())
    on_gpu = evaluated(reg, add_spec, "G", verdict(), hardware=H200)

    v1 = reg.promote(a, note="first")
    v2 = reg.promote(b)
    g1 = reg.promote(on_gpu)

    assert (v1.number, v2.number, g1.number) == (1, 2, 1)
    assert (v1.op, v1.backend, v1.hardware, v1.note) == ("add", "triton", CPU, "first")
    history = reg.versions(op="add")
    assert [v.id for v in history] == [g1.id, v2.id, v1.id]
    cpu_history = [v for v in history if v.hardware == CPU]
    assert [(v.number, v.active) for v in cpu_history] == [(2, True), (1, False)]
    active = reg.active_versions()
    assert sorted((v.hardware, v.candidate_id) for v in active) == sorted([(CPU, b), (H200, on_gpu)])
    assert reg.versions(op="mul") == []


def test_promote_uses_the_latest_correct_evaluation(reg: Registry, add_spec: int) -> None:
    cand = reg.record_candidate(add_spec, "A", "triton", "user")
    reg.record_evaluation(cand, CPU, {}, verdict())
    latest_ok = reg.record_evaluation(cand, H200, {}, verdict())
    reg.record_evaluation(cand, CPU, {}, verdict(correct=False))
    version = reg.promote(cand)
    assert (version.evaluation_id, version.hardware) == (latest_ok, H200)


def test_repromoting_the_active_candidate_is_a_noop(reg: Registry, add_spec: int) -> None:
    a = evaluated(reg, add_spec, "A", verdict())
    first = reg.promote(a, note="ship it")
    again = reg.promote(a, note="ignored")
    assert again == first
    assert len(reg.versions()) == 1


def test_promoting_an_older_candidate_again_is_a_new_version(reg: Registry, add_spec: int) -> None:
    a = evaluated(reg, add_spec, "A", verdict())
    b = evaluated(reg, add_spec, "B", verdict())
    reg.promote(a)
    reg.promote(b)
    rollback = reg.promote(a, note="rollback")
    assert (rollback.number, rollback.candidate_id, rollback.active) == (3, a, True)
    assert [v.active for v in reg.versions()] == [True, False, False]


def test_database_refuses_two_active_versions_for_one_key(reg: Registry, add_spec: int) -> None:
    # The invariant holds even for writers that bypass Registry.promote.
    a = evaluated(reg, add_spec, "A", verdict())
    v1 = reg.promote(a)
    with sqlite3.connect(reg.path) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO versions (op, backend, hardware, number, candidate_id, evaluation_id,"
            " promoted_at, active) VALUES ('add', 'triton', ?, 2, ?, ?, '2025-01-01', 1)",
            (CPU, a, v1.evaluation_id),
        )


def test_closed_registry_refuses_work(tmp_path: Path) -> None:
    registry = Registry(tmp_path / "r.db")
    registry.close()
    with pytest.raises(RegistryError, match="closed"):
        registry.list_kernels()


# -- database location --------------------------------------------------------


def test_resolve_db_path_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPFORGE_DB", raising=False)
    assert resolve_db_path(None) == tmp_path / ".opforge" / "opforge.db"
    monkeypatch.setenv("OPFORGE_DB", str(tmp_path / "env.db"))
    assert resolve_db_path(None) == tmp_path / "env.db"
    assert resolve_db_path("cli.db") == tmp_path / "cli.db"
    monkeypatch.setenv("OPFORGE_DB", "")
    assert resolve_db_path(None) == tmp_path / ".opforge" / "opforge.db"


# -- concurrency --------------------------------------------------------------


def hold_write_lock(path: Path) -> sqlite3.Connection:
    blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN IMMEDIATE")
    return blocker


def test_write_retries_past_a_lock_held_by_another_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # busy_timeout 0 makes SQLite fail at once, so the registry's own retry
    # loop (not SQLite's wait) is what gets the write through.
    # The other writer lets go when the first retry is announced (not after a guessed delay, which
    # a slow machine could outlast before the write even began): the write must have met the lock.
    monkeypatch.setattr(registry_db, "BUSY_TIMEOUT_S", 0.0)
    path = tmp_path / "locked.db"
    with Registry(path) as reg:
        blocker = hold_write_lock(path)
        release = ReleaseOnRetry(blocker)
        logging.getLogger("opforge.registry.db").addHandler(release)
        try:
            with caplog.at_level(logging.WARNING, logger="opforge.registry.db"):
                spec = reg.record_spec("add", "ops/add.py", SPEC_SRC)
        finally:
            logging.getLogger("opforge.registry.db").removeHandler(release)
            blocker.close()
        assert reg.record_spec("add", "ops/add.py", SPEC_SRC) == spec
    assert release.retries == 1  # one retry, after which the lock was free
    assert "retrying" in caplog.text


class ReleaseOnRetry(logging.Handler):
    """Rolls the blocking writer's transaction back at the registry's first retry warning."""

    def __init__(self, blocker: sqlite3.Connection) -> None:
        super().__init__(logging.WARNING)
        self.blocker, self.retries = blocker, 0

    def emit(self, record: logging.LogRecord) -> None:
        if "retrying" in record.getMessage():
            self.retries += 1
            if self.blocker.in_transaction:
                self.blocker.execute("ROLLBACK")


def test_write_gives_up_with_registry_error_when_lock_persists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry_db, "BUSY_TIMEOUT_S", 0.0)
    monkeypatch.setattr(registry_db, "WRITE_ATTEMPTS", 2)
    path = tmp_path / "locked.db"
    with Registry(path) as reg:
        blocker = hold_write_lock(path)
        try:
            with pytest.raises(RegistryError, match="still locked after 2 attempts"):
                reg.record_spec("add", "ops/add.py", SPEC_SRC)
        finally:
            blocker.close()
        # Reads are not blocked by a writer in WAL mode.
        assert reg.list_kernels() == []


PER_WORKER = 50


def _worker(path: str, tag: str, start: Any) -> None:
    """Opens a fresh database concurrently with its twin, so migration, spec
    and candidate dedup, and evaluation inserts all race."""
    start.wait(timeout=60)
    with Registry(path) as registry:
        spec = registry.record_spec("add", "ops/add.py", SPEC_SRC)
        cand = registry.record_candidate(spec, "shared kernel", "triton", "expert")
        for i in range(PER_WORKER):
            registry.record_evaluation(cand, CPU, {"worker": tag}, {**verdict(), "i": i, "tag": tag})


def test_two_processes_write_concurrently_without_losing_rows(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    procs = [ctx.Process(target=_worker, args=(path, tag, start)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=180)
    for p in procs:
        if p.is_alive():
            p.kill()
    # A worker that hit "database is locked" (or anything else) exits non-zero.
    assert [p.exitcode for p in procs] == [0, 0]

    with Registry(path) as registry:
        (row,) = registry.list_kernels()
        evals = registry.get_candidate(row.candidate_id).evaluations
    assert len(evals) == 2 * PER_WORKER
    seen = {(e.verdict["tag"], e.verdict["i"]) for e in evals}
    assert seen == {(t, i) for t in ("a", "b") for i in range(PER_WORKER)}
