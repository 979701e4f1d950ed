"""Schema migrations of the registry, on real SQLite files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from opforge.registry import Registry, RegistryError
from opforge.registry.db import alembic_config, make_engine, migrate
from opforge.registry.models import Base
from opforge.registry.store import sha256_text

TABLES = {"specs", "candidates", "evaluations", "versions", "runs", "llm_calls", "reviews"}
INITIAL = "0001_initial"
PREVIOUS = "0002_evaluation_speed_columns"  # the revision before runs
RUNS = "0003_runs_and_llm_calls"  # the revision before head (reviews)


def head_revision() -> str:
    return ScriptDirectory.from_config(alembic_config("unused.db")).get_current_head()


def db_revision(path: Path) -> str | None:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT version_num FROM alembic_version").fetchall()
    return rows[0][0] if rows else None


def migrate_file(path: Path, revision: str, downgrade: bool = False) -> None:
    engine = make_engine(path)
    try:
        migrate(engine, path, revision, downgrade=downgrade)
    finally:
        engine.dispose()


def table_names(path: Path) -> set[str]:
    engine = make_engine(path)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def columns(path: Path, table: str) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def seed_at_initial(path: Path) -> None:
    """Rows as the 0001 schema stored them: no speed columns on evaluations."""
    verdict = {"correct": True, "stage": "timed", "reasons": [],
               "timings": {"kernel_ms": 0.25, "speedup_eager": 3.0}}
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO specs VALUES (1, 'add', 'ops/add.py', 'abc', 'src', '2025-01-01 00:00:00')")
        conn.execute(
            "INSERT INTO candidates VALUES (1, 1, 'kern', 'def', 'triton', 'user', NULL, NULL,"
            " '2025-01-01 00:00:00')"
        )
        conn.execute(
            "INSERT INTO evaluations VALUES (1, 1, 'cpu/x86_64/triton-interpreter', '{}', 1, 'timed',"
            " '[]', ?, ?, '2025-01-01 00:00:00')",
            (json.dumps(verdict), json.dumps(verdict["timings"])),
        )
        conn.execute(
            "INSERT INTO evaluations VALUES (2, 1, 'cpu/x86_64/triton-interpreter', '{}', 0, 'compile',"
            " '[\"boom\"]', '{}', NULL, '2025-01-02 00:00:00')"
        )


def seed_at_previous(path: Path) -> None:
    """Rows as 0002 stored them: candidates with no run, one of them promoted."""
    verdict = {"correct": True, "stage": "timed", "reasons": [], "timings": {"speedup_eager": 1.5}}
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO specs VALUES (1, 'add', 'ops/add.py', ?, 'src', '2025-01-01 00:00:00')",
                     (sha256_text("src"),))
        for cid, source, parent in ((1, "kern", None), (2, "kern v2", 1)):
            conn.execute(
                "INSERT INTO candidates (id, spec_id, source, sha256, backend, drafter, parent_id,"
                " meta, created_at) VALUES (?, 1, ?, ?, 'triton', 'llm', ?, '{\"model\": \"m\"}',"
                " '2025-01-01 00:00:00')",
                (cid, source, sha256_text(source), parent),
            )
        conn.execute(
            "INSERT INTO evaluations (id, candidate_id, hardware, hardware_info, correct, stage,"
            " reasons, verdict, timings, created_at, kernel_ms, speedup_eager)"
            " VALUES (1, 2, 'cpu/x', '{}', 1, 'timed', '[]', ?, ?, '2025-01-02 00:00:00', NULL, 1.5)",
            (json.dumps(verdict), json.dumps(verdict["timings"])),
        )
        conn.execute(
            "INSERT INTO versions VALUES (1, 'add', 'triton', 'cpu/x', 1, 2, 1, '2025-01-03 00:00:00',"
            " 1, NULL)"
        )


def test_upgrade_from_empty_creates_all_tables_at_head(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    Registry(path).close()
    assert table_names(path) == TABLES | {"alembic_version"}
    assert db_revision(path) == head_revision()
    assert {"kernel_ms", "speedup_eager"} <= columns(path, "evaluations")
    assert {"run_id", "round"} <= columns(path, "candidates")


def test_head_is_the_steps_revision() -> None:
    # Tells whoever adds a revision to add an upgrade test from the one before it (0004 -> 0005:
    # tests/test_registry_levels.py; 0005 -> 0006: tests/test_verdict_steps.py; 0006 -> 0007:
    # tests/test_interrupt.py).
    assert head_revision() == "0007_run_interrupted"


def test_migrated_schema_matches_models(tmp_path: Path) -> None:
    # Catches a model change made without a migration (or the reverse).
    path = tmp_path / "fresh.db"
    Registry(path).close()
    engine = make_engine(path)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()
    assert diff == []


def test_initial_revision_is_upgraded_in_place_keeping_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    migrate_file(path, INITIAL)
    assert db_revision(path) == INITIAL
    assert "kernel_ms" not in columns(path, "evaluations")
    seed_at_initial(path)

    with Registry(path) as reg:
        detail = reg.get_candidate(1)
        kernels = reg.list_kernels(op="add")
    assert db_revision(path) == head_revision()
    assert detail is not None and detail.op == "add" and detail.source == "kern"
    first, second = detail.evaluations
    # 0002 backfills the speed columns from the stored timings JSON.
    assert (first.kernel_ms, first.speedup_eager) == (0.25, 3.0)
    assert (second.kernel_ms, second.speedup_eager) == (None, None)
    assert kernels[0].first_reason == "boom"


def test_previous_revision_is_upgraded_in_place_keeping_candidates(tmp_path: Path) -> None:
    path = tmp_path / "before_runs.db"
    migrate_file(path, PREVIOUS)
    assert "runs" not in table_names(path)
    seed_at_previous(path)

    with Registry(path) as reg:
        kernels = reg.list_kernels()
        child = reg.get_candidate(2)
        spec = reg.record_spec("add", "ops/add.py", "src")
        assert spec == 1
        run = reg.create_run(reg.new_run_key(), "add", spec, "triton", "llm", "cpu/x", {})
        # Re-drafting an old source in a run finds the old row and leaves it outside the run.
        assert reg.record_candidate(spec, "kern", "triton", "llm", run_id=run.id, round=0) == 1
        assert reg.run_candidates(run.run_key) == []
        examples = reg.verified_examples()
    assert db_revision(path) == head_revision()
    assert [(k.candidate_id, k.run_id, k.round, k.active) for k in kernels] == [
        (2, None, None, True), (1, None, None, False)]
    assert child is not None and (child.parent_id, child.meta, child.source) == (1, {"model": "m"}, "kern v2")
    assert examples == [("add", "src", "kern v2", 1.5)]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_downgrade_to_base_then_upgrade_head(tmp_path: Path) -> None:
    path = tmp_path / "cycle.db"
    Registry(path).close()
    migrate_file(path, "base", downgrade=True)
    assert table_names(path) & TABLES == set()
    assert db_revision(path) is None
    with Registry(path) as reg:
        spec = reg.record_spec("mul", "ops/mul.py", "src")
        assert reg.record_candidate(spec, "k", "triton", "user") == 1
    assert table_names(path) == TABLES | {"alembic_version"}
    assert db_revision(path) == head_revision()


def test_downgrade_to_initial_keeps_rows_referenced_by_versions(tmp_path: Path) -> None:
    # The 0003 downgrade rebuilds `candidates` and the 0002 one `evaluations`,
    # which `versions` references: with foreign keys enforced during the
    # rebuilds this would fail or cascade.
    path = tmp_path / "step.db"
    verdict = {"correct": True, "failed_step": None, "reasons": [], "timings": {"kernel_ms": 1.0}}
    with Registry(path) as reg:
        cand = reg.record_candidate(reg.record_spec("add", "a.py", "s"), "k", "triton", "user")
        reg.record_evaluation(cand, "cpu/x", {}, verdict)
        reg.promote(cand)
    migrate_file(path, INITIAL, downgrade=True)
    assert "kernel_ms" not in columns(path, "evaluations")
    assert "run_id" not in columns(path, "candidates")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM evaluations").fetchone() == (1,)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    with Registry(path) as reg:
        assert reg.get_candidate(cand).evaluations[0].kernel_ms == 1.0
        assert [v.candidate_id for v in reg.active_versions()] == [cand]


def test_downgrade_one_step_drops_runs_and_keeps_candidates(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with Registry(path) as reg:
        spec = reg.record_spec("add", "a.py", "s")
        run = reg.create_run("r-1", "add", spec, "triton", "llm", "cpu/x", {"budget": 3})
        cand = reg.record_candidate(spec, "k", "triton", "llm", run_id=run.id, round=0)
        reg.record_evaluation(cand, "cpu/x", {}, {"correct": True, "failed_step": None, "reasons": []})
        reg.update_run("r-1", status="done", best_candidate_id=cand)
    migrate_file(path, PREVIOUS, downgrade=True)
    assert db_revision(path) == PREVIOUS
    assert table_names(path) == TABLES - {"runs", "llm_calls", "reviews"} | {"alembic_version"}
    assert not {"run_id", "round"} & columns(path, "candidates")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT id, source FROM candidates").fetchall() == [(cand, "k")]
        assert conn.execute("SELECT count(*) FROM evaluations").fetchone() == (1,)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    with Registry(path) as reg:
        assert reg.get_candidate(cand).run_id is None
        assert reg.get_run("r-1") is None


def test_runs_revision_is_upgraded_to_reviews_keeping_runs(tmp_path: Path) -> None:
    path = tmp_path / "before_reviews.db"
    migrate_file(path, RUNS)
    assert "reviews" not in table_names(path)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO specs VALUES (1, 'add', 'a.py', 'abc', 'src', '2025-01-01 00:00:00')")
        conn.execute("INSERT INTO candidates (id, spec_id, source, sha256, backend, drafter, created_at)"
                     " VALUES (1, 1, 'k', 'def', 'triton', 'expert', '2025-01-01 00:00:00')")
        conn.execute("INSERT INTO runs (id, run_key, op, spec_id, backend, drafter, hardware, status, config,"
                     " tokens, started_at) VALUES (1, 'r-1', 'add', 1, 'triton', 'expert', 'cpu/x', 'done',"
                     " '{}', 0, '2025-01-01 00:00:00')")
    with Registry(path) as reg:
        assert reg.get_run("r-1").status == "done"
        review = reg.review(1, "rejected", "spills 40 registers")
        assert [r.id for r in reg.reviews(1)] == [review.id]
        with pytest.raises(RegistryError, match="needs a comment"):
            reg.review(1, "rejected", "  ")
    assert db_revision(path) == head_revision()


def test_downgrade_one_step_drops_reviews_only(tmp_path: Path) -> None:
    path = tmp_path / "reviews.db"
    with Registry(path) as reg:
        cand = reg.record_candidate(reg.record_spec("add", "a.py", "s"), "k", "triton", "user")
        reg.review(cand, "approved", "fine")
    migrate_file(path, RUNS, downgrade=True)
    assert table_names(path) == TABLES - {"reviews"} | {"alembic_version"}
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM candidates").fetchone() == (1,)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_database_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "wal.db"
    Registry(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_database_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    Registry(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    with pytest.raises(RegistryError, match="9999_from_the_future"):
        Registry(path)


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(RegistryError, match="cannot open registry"):
        Registry(path)
