"""The verification ladder after the harness: the registry's level columns (migration 0005 and its
backfill of older rows), the promotion policy's level rule, and `opforge kernels`/`show`/`promote`."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from opforge import cli
from opforge.registry import Registry, RegistryError
from opforge.registry.db import make_engine, migrate

REVIEWS = "0004_reviews"  # the revision before the levels
CPU = "cpu/x86_64/triton-interpreter"
GPU = "cuda/NVIDIA H200/sm_90"


def step(status: str, tool: str | None = None, version: str | None = None, seconds: float | None = None,
         reason: str | None = None) -> dict:
    return {"status": status, "tool": tool, "version": version, "seconds": seconds, "reason": reason}


def ladder_verdict(level: str | None, verified_on: str | None, correct: bool, speedup: float | None = None) -> dict:
    """A verdict as the ladder's harness writes it: CUDA built by nvcc, the CPU run skipped."""
    steps = {"static": step("passed", "opforge-static", "1", 0.01),
             "compile": step("passed", "nvcc", "13.0", 1.02),
             "cpu_run": step("skipped", reason="no emulator for this candidate here"),
             "device_run": step("skipped", reason="no GPU on this machine")}
    timings = None if speedup is None else {"kernel_ms": 0.1, "speedup_eager": speedup}
    return {"correct": correct, "failed_step": None, "reasons": [] if correct else
            ["not-verifiable: no numerics step could run here"], "level": level, "verified_on": verified_on,
            "steps": steps, "timings": timings}


def migrate_file(path: Path, revision: str, downgrade: bool = False) -> None:
    engine = make_engine(path)
    try:
        migrate(engine, path, revision, downgrade=downgrade)
    finally:
        engine.dispose()


def seed_at_reviews(path: Path) -> None:
    """Evaluations as 0004 stored them, one per backfill case (id: what the stored verdict says)."""
    cases = [  # (id, candidate, hardware, correct, verdict)
        (1, 1, CPU, 1, {"device": "cpu", "stage": "anticheat"}),  # interpreter, no version known
        (2, 1, CPU, 1, {"device": "cpu", "stages": {"cpu_run": {"version": "3.5.0"}}}),
        (3, 1, GPU, 1, {"device": "cuda", "stage": "profile", "timings": {"kernel_ms": 0.2}}),
        (4, 1, GPU, 1, {"device": "cuda", "stage": "anticheat"}),  # on the device, not timed
        (5, 1, CPU, 0, {"device": "cpu", "stage": "compare"}),  # incorrect: nothing to infer
        (6, 2, CPU, 1, {"device": "cpu", "stage": "anticheat"}),  # not a Triton candidate
    ]
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO specs VALUES (1, 'add', 'ops/add.py', 'abc', 'src', '2025-01-01 00:00:00')")
        for cid, backend in ((1, "triton"), (2, "triton_ascend")):
            conn.execute("INSERT INTO candidates (id, spec_id, source, sha256, backend, drafter, created_at)"
                         f" VALUES ({cid}, 1, 'k{cid}', 'sha{cid}', '{backend}', 'user', '2025-01-01 00:00:00')")
        for ev_id, cand, hardware, correct, extra in cases:
            verdict = {"correct": bool(correct), "reasons": [] if correct else ["boom"]} | extra
            conn.execute(
                "INSERT INTO evaluations (id, candidate_id, hardware, hardware_info, correct, stage, reasons, verdict,"
                " timings, kernel_ms, speedup_eager, created_at) VALUES (?, ?, ?, '{}', ?, ?, ?, ?, ?, NULL, NULL,"
                " '2025-01-02 00:00:00')",
                (ev_id, cand, hardware, correct, verdict.get("stage", "profile"), json.dumps(verdict["reasons"]),
                 json.dumps(verdict), json.dumps(verdict.get("timings")) if "timings" in verdict else None))


def levels(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT id, level, verified_on FROM evaluations ORDER BY id").fetchall()


def test_upgrade_from_reviews_adds_the_level_columns_and_backfills_what_the_verdict_tells(tmp_path):
    path = tmp_path / "before_levels.db"
    migrate_file(path, REVIEWS)
    seed_at_reviews(path)
    with Registry(path) as reg:
        detail = reg.get_candidate(1)
        (listed,) = [k for k in reg.list_kernels() if k.candidate_id == 1]
    assert levels(path) == [
        (1, "emulated", "cpu:triton-interpreter-unknown"),
        (2, "emulated", "cpu:triton-interpreter-3.5.0"),
        (3, "profiled", "nvidia-h200"),
        (4, "device", "nvidia-h200"),
        (5, None, None),
        (6, None, None),
    ]
    assert [e.level for e in detail.evaluations] == ["emulated", "emulated", "profiled", "device", None]
    assert (listed.level, listed.verified_on) == (None, None)  # its latest evaluation (#5) is incorrect


def test_downgrade_to_reviews_drops_the_level_columns_and_keeps_the_evaluations(tmp_path):
    path = tmp_path / "levels.db"
    with Registry(path) as reg:
        cand = reg.record_candidate(reg.record_spec("add", "a.py", "s"), "k", "cuda", "user")
        reg.record_evaluation(cand, CPU, {}, ladder_verdict("emulated", "cpu:opforge-cuda-emu-1.0", True))
        reg.promote(cand)
    migrate_file(path, REVIEWS, downgrade=True)
    with sqlite3.connect(path) as conn:
        names = {row[1] for row in conn.execute("PRAGMA table_info(evaluations)")}
        assert conn.execute("SELECT count(*) FROM evaluations").fetchone() == (1,)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert not {"level", "verified_on"} & names
    with Registry(path) as reg:  # and up again: the level is read back out of the stored verdict
        assert reg.latest_evaluation(cand).level == "emulated"


def test_a_level_is_recorded_from_the_verdict_and_an_unknown_one_refused(tmp_path):
    with Registry(tmp_path / "r.db") as reg:
        cand = reg.record_candidate(reg.record_spec("add", "a.py", "s"), "k", "triton", "user")
        ev = reg.record_evaluation(cand, CPU, {}, ladder_verdict("emulated", "cpu:triton-interpreter-3.5.0", True))
        legacy = reg.record_evaluation(cand, CPU, {}, {"correct": True, "stage": "anticheat", "reasons": []})
        with pytest.raises(RegistryError, match="verdict\\['level'\\] must be one of static, "):
            reg.record_evaluation(cand, CPU, {}, ladder_verdict("gpu", None, True))
        with pytest.raises(RegistryError, match="verified_on"):
            reg.record_evaluation(cand, CPU, {}, ladder_verdict("emulated", " ", True))
        rows = {e.id: e for e in reg.get_candidate(cand).evaluations}
    assert (rows[ev].level, rows[ev].verified_on) == ("emulated", "cpu:triton-interpreter-3.5.0")
    assert (rows[legacy].level, rows[legacy].verified_on) == (None, None)
    assert len(rows) == 2


@pytest.mark.parametrize("correct", [False, True], ids=["incorrect", "claims-correct"])
@pytest.mark.parametrize("level", ["static", "compiled"])
def test_a_static_or_compiled_kernel_is_never_promoted_even_when_fast(tmp_path, level, correct):
    # `claims-correct` is a verdict the ladder never writes (correct without a numerics step): the
    # level alone must keep it out, whatever its speedup, with --force too.
    with Registry(tmp_path / "r.db") as reg:
        cand = reg.record_candidate(reg.record_spec("add", "a.py", "s"), "k", "cuda", "user")
        reg.record_evaluation(cand, GPU, {}, ladder_verdict(level, None, correct, speedup=4.0))
        assert reg.latest_evaluation(cand).level == level
        for force in (False, True):
            with pytest.raises(RegistryError, match=f"candidate {cand} is not promotable: on {GPU}: .*level {level}"):
                reg.promote(cand, force=force)
        assert reg.promote_auto() == []
        assert reg.active_versions() == []


def test_auto_promotion_takes_the_promotable_level_over_a_faster_compiled_one(tmp_path):
    with Registry(tmp_path / "r.db") as reg:
        spec = reg.record_spec("add", "a.py", "s")
        fast = reg.record_candidate(spec, "fast", "cuda", "user")
        checked = reg.record_candidate(spec, "checked", "cuda", "user")
        reg.record_evaluation(fast, GPU, {}, ladder_verdict("compiled", None, True, speedup=9.0))
        reg.record_evaluation(checked, GPU, {}, ladder_verdict("profiled", "nvidia-h200", True, speedup=1.5))
        (version,) = reg.promote_auto()
    assert version.candidate_id == checked


def cli_run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def recorded(tmp_path) -> tuple[Path, int, int, int]:
    """A registry with a compiled-level CUDA kernel, an emulated Triton one and a legacy one."""
    db = tmp_path / "cli.db"
    with Registry(db) as reg:
        spec = reg.record_spec("add", "a.py", "s")
        compiled = reg.record_candidate(spec, "cuda kernel", "cuda", "user")
        emulated = reg.record_candidate(spec, "triton kernel", "triton", "user")
        legacy = reg.record_candidate(spec, "old kernel", "triton", "user")
        reg.record_evaluation(compiled, CPU, {}, ladder_verdict("compiled", None, False, speedup=3.0))
        ok = ladder_verdict("emulated", "cpu:triton-interpreter-3.5.0", True)
        ok["steps"] |= {"cpu_run": step("passed", "triton-interpreter", "3.5.0", 2.5)}
        reg.record_evaluation(emulated, CPU, {}, ok)
        reg.record_evaluation(legacy, CPU, {}, {"correct": True, "stage": "anticheat", "reasons": []})
    return db, compiled, emulated, legacy


def test_promote_refuses_a_compiled_kernel_in_one_line_naming_its_level(capsys, recorded):
    db, compiled, emulated, _ = recorded
    for extra in ([], ["--force"]):
        code, out, err = cli_run(capsys, "--db", str(db), "promote", str(compiled), *extra)
        assert code == 2 and out == ""
        (line,) = err.strip().splitlines()
        assert line.startswith(f"opforge: error: candidate {compiled} is not promotable: on {CPU}: ")
        assert "level compiled" in line and "emulated, device or profiled" in line
        assert "--force waives" not in line  # --force would not change the answer
    code, out, _ = cli_run(capsys, "--db", str(db), "promote", str(emulated))
    assert code == 0 and f"is now candidate #{emulated}" in out


def table_rows(out: str) -> tuple[list[str], dict[str, dict[str, str]]]:
    """A rich table as printed: its header and its rows by first cell, cells by column name."""
    lines = out.splitlines()
    header = [c.strip() for c in next(line for line in lines if line.startswith("┃")).strip("┃").split("┃")]
    cells = [[c.strip() for c in line.strip("│").split("│")] for line in lines if line.startswith("│")]
    return header, {row[0]: dict(zip(header, row)) for row in cells}


def test_kernels_lists_each_candidates_level(capsys, recorded):
    db, compiled, emulated, legacy = recorded
    code, out, _ = cli_run(capsys, "--db", str(db), "kernels")
    header, rows = table_rows(out)
    assert code == 0 and header.index("level") == header.index("verdict") + 1
    assert {int(i): r["level"] for i, r in rows.items()} == {compiled: "compiled", emulated: "emulated", legacy: "—"}


def test_show_prints_the_level_where_it_ran_and_every_step(capsys, recorded):
    db, compiled, emulated, legacy = recorded
    code, out, _ = cli_run(capsys, "--db", str(db), "show", str(emulated))
    assert code == 0
    assert "correct, level emulated · cpu:triton-interpreter-3.5.0" in out
    names = ("static", "compile", "cpu_run", "device_run", "profile")
    steps = [line.strip() for line in out.splitlines() if line.strip().split(":")[0] in names]
    assert steps == ["static: passed (opforge-static 1, 0.01 s)", "compile: passed (nvcc 13.0, 1.02 s)",
                      "cpu_run: passed (triton-interpreter 3.5.0, 2.50 s)",
                      "device_run: skipped: no GPU on this machine"]
    code, out, _ = cli_run(capsys, "--db", str(db), "show", str(legacy))
    assert code == 0 and "correct, level —" in out and "cpu_run:" not in out
    code, out, _ = cli_run(capsys, "--db", str(db), "show", str(compiled), "--json")
    (ev,) = json.loads(out)["evaluations"]
    assert (ev["level"], ev["steps"]["compile"]["tool"]) == ("compiled", "nvcc")


def test_the_batch_report_gives_each_ops_level_and_where_it_was_verified(recorded):
    from types import SimpleNamespace

    from rich.console import Console

    from opforge.agents.batch.report import COLUMNS, BatchReport, op_row
    from opforge.agents.batch.view import report_table

    db, compiled, emulated, legacy = recorded
    with Registry(db) as reg:
        rows = [op_row(SimpleNamespace(op=f"op{cid}", action="run", spec_path="a.py", candidate_id=None),
                       {"status": "verified", "best_candidate_id": cid}, reg, CPU) for cid in (emulated, legacy)]
    assert [(r["level"], r["verified_on"]) for r in rows] == [("emulated", "cpu:triton-interpreter-3.5.0"), (None, None)]
    assert COLUMNS.index("level") == COLUMNS.index("failed_step") + 1  # and so in the CSV
    report = BatchReport("local", 1, "triton", CPU, "t0", "t1", 1.0, rows)
    console = Console(width=200, record=True)
    console.print(report_table(report))
    header, table = table_rows(console.export_text())
    assert {op: r["level"] for op, r in table.items()} == {f"op{emulated}": "emulated", f"op{legacy}": "—"}
    assert header.index("level") == header.index("correct") + 1
