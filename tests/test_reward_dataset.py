"""The dataset of tasks (opforge/reward/dataset.py, `opforge reward-dataset`) and the trajectory
export with rewards (`opforge export-dataset`): verl's row format through Parquet and JSONL, the
ground truth that scores with no file, a non-spec reported and skipped, a prompt that never holds
the task's own answer, and every recorded LLM call carrying the reward of its latest verdict."""
from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq

from conftest import KERNELS, ROOT, TINY
from opforge.cli import main
from opforge.harness.ladder import step
from opforge.knowledge.retrieve import retrieve
from opforge.registry import Registry, new_run_key
from opforge.reward import dataset
from opforge.reward.prompt import knowledge
from opforge.reward.score import Task
from test_cli_frictions import refused

COLUMNS = ["data_source", "prompt", "ability", "reward_model", "extra_info"]


def test_rows_are_verls_format_and_read_back_the_same(tmp_path):
    folder = tmp_path / "level1"
    folder.mkdir()
    (folder / "1_Tiny_softmax.py").write_text(TINY.read_text())
    (folder / "notes.py").write_text("x = 1\n")  # Python, but no spec: reported and skipped
    skipped = []
    tasks = dataset.collect([folder], backends=("triton", "cuda"), skipped=lambda p, why: skipped.append((p.name, why)))
    assert skipped == [("notes.py", "no Model or get_inputs at module level")]
    assert [(t.op, t.backend, t.data_source) for t in tasks] == [
        ("op_1_Tiny_softmax", "triton", "opforge/level1"), ("op_1_Tiny_softmax", "cuda", "opforge/level1")]
    rows = dataset.rows(tasks, knowledge_k=1, split="test")
    for out in (tmp_path / "d.parquet", tmp_path / "d.jsonl"):
        dataset.write(rows, out)
        back = pq.read_table(out).to_pylist() if out.suffix == ".parquet" else [
            json.loads(line) for line in out.read_text().splitlines()]
        assert back == rows and list(back[0]) == COLUMNS
    frame = pd.read_parquet(tmp_path / "d.parquet")
    assert list(frame.columns) == COLUMNS and frame.ability.tolist() == ["kernel/triton", "kernel/cuda"]
    first = rows[0]
    assert [m["role"] for m in first["prompt"]] == ["system", "user"] and "op_1_Tiny_softmax" in first["prompt"][1]["content"]
    assert first["reward_model"]["style"] == "rule" and first["extra_info"]["split"] == "test"
    assert [r["extra_info"]["index"] for r in rows] == [0, 1]
    task = dataset.task_of(first["reward_model"]["ground_truth"])  # the spec's text itself, no path
    assert (task.spec_source, task.op, task.backend) == (TINY.read_text(), "op_1_Tiny_softmax", "triton")


def test_a_prompt_never_holds_the_tasks_own_answer():
    task = Task.from_path(ROOT / "ops" / "softmax.py")
    own = "Known-good Triton kernel for softmax"
    assert own in [item.title for item in retrieve(task.spec_source, "triton", k=4)]  # retrieval ranks it first
    items = knowledge(task, k=4)
    assert len(items) == 4 and own not in [item.title for item in items]
    assert "Known-good Triton kernel for log_softmax" in [item.title for item in items]  # a neighbour stays


CPU = "cpu/x86_64/triton-interpreter"


def verdict(level=None, failed=None, check=None, variants=(), anticheat=None):
    return {"correct": failed is None, "level": level, "failed_step": failed, "reasons": [f"{check}: x"] if failed else [],
            "steps": {failed: step("failed", reason="x", check=check)} if failed else {},
            "variants": [{"passed": p} for p in variants], "anticheat": anticheat or {}}


def test_trajectories_carry_the_reward_of_their_latest_verdict(tmp_path):
    calls = []
    with Registry(tmp_path / "opforge.db") as reg:
        spec = reg.record_spec("tiny_softmax", str(TINY), TINY.read_text())
        run = reg.create_run(new_run_key(), "tiny_softmax", spec, "triton", "llm", CPU, {})
        for i, verdicts in enumerate([
                [verdict(failed="cpu_run", check="compare", variants=(True, False, False, True))],
                [verdict(failed="cpu_run", check="compare"), verdict(level="emulated")],  # latest counts
                [verdict(level="emulated", failed="cpu_run", check="anticheat", anticheat={"constant-output": "fail"})],
                []]):  # drafted, never verified
            cand = reg.record_candidate(spec, f"kernel {i}", "triton", "llm", run_id=run.id, round=i)
            for v in verdicts:
                reg.record_evaluation(cand, CPU, {}, v)
            calls.append(reg.record_llm_call(run.id, cand, i, Call()))
        rows = dataset.trajectories(reg)
    assert [(r["reward"]["tier"], r["reward"]["reward"]) for r in rows] == [
        ("wrong", 0.45), ("correct", 1.0), ("cheat", -1.0), (None, None)]
    assert rows[0]["reward"]["fraction"] == 0.5 and rows[2]["reward"]["why"] == ["constant-output"]
    assert all("verdict" not in r and r["reward"]["version"] == "opforge-reward/1" for r in rows)
    out = tmp_path / "traj.jsonl"
    assert main(["--db", str(tmp_path / "opforge.db"), "export-dataset", "--out", str(out)]) == 0  # in process: torch is here
    assert [json.loads(line)["reward"] for line in out.read_text().splitlines()] == [r["reward"] for r in rows]


class Call:
    model, temperature, reply, error, cost_usd = "m", 0.2, "```python\nkernel\n```", None, None
    messages = ({"role": "user", "content": "write softmax"},)
    prompt_tokens, completion_tokens, latency_s = 10, 5, 0.1


def test_reward_dataset_command(tmp_path, capsys):
    line, torch = refused("reward-dataset", str(TINY), "--out", str(tmp_path / "d.csv"))
    assert "written as .jsonl or .parquet" in line and torch == "torch imported: False"
    assert "no tasks" in refused("reward-dataset", "--out", str(tmp_path / "d.jsonl"))[0]
    out = tmp_path / "d.jsonl"
    assert main(["reward-dataset", str(TINY), str(KERNELS / "good.py"), "--knowledge", "0", "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert "good.py: no Model or get_inputs" in said.err and "1 file(s) skipped" in said.out
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["data_source"] == "opforge/specs" and row["extra_info"]["op"] == "tiny_softmax"
