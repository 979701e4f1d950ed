"""The agent loop end to end: the scripted OpenAI-compatible server (real HTTP, the real `openai`
client) answers with a kernel that does not compile for the GPU, then one that computes wrong
values, then a cheat, then a correct one; the run must carry each failure's feedback into the
next prompt, record everything, and promote the correct kernel. A run killed with SIGKILL
resumes without evaluating anything twice."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.config import Budget
from agents.drafters.base import DrafterError
from agents.graph import build_graph
from agents.run import RunOptions, resume_run, start_run
from conftest import KERNELS, TINY
from harness.verify import VerifyOptions
from llm_server import Error, ScriptedLLM
from registry import Registry

OPFORGE = str(Path(sys.executable).parent / "opforge")


def fenced(name: str) -> str:
    return f"Here is my kernel.\n\n```python\n{(KERNELS / name).read_text()}\n```\n"


SCRIPT = [fenced("interpreter_only.py"), fenced("wrong_no_mask.py"), Error(429, headers={"Retry-After": "0"}),
          fenced("cheat_torch_compute.py"), "I think the kernel should use a block size of 64.", fenced("good.py")]


def options(rounds: int = 6) -> RunOptions:
    return RunOptions(drafter="llm", budget=Budget(rounds=rounds, candidates=1),
                      verify=VerifyOptions(device="cpu", trials=2))


@pytest.fixture
def llm_env(monkeypatch):
    def configure(server: ScriptedLLM) -> None:
        monkeypatch.setenv("OPFORGE_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("OPFORGE_LLM_MODEL", "scripted")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return configure


def test_graph_has_the_documented_shape():
    graph = build_graph().get_graph()
    edges = {(e.source, e.target) for e in graph.edges}
    assert {("__start__", "plan"), ("plan", "draft"), ("draft", "evaluate"), ("evaluate", "reflect"),
            ("reflect", "decide"), ("decide", "draft"), ("decide", "record"), ("record", "__end__")} <= edges


def test_feedback_flows_into_the_next_prompt_and_the_correct_kernel_is_promoted(llm_env, isolated_registry):
    events = []
    with ScriptedLLM(SCRIPT) as server, Registry(isolated_registry) as reg:
        llm_env(server)
        summary = start_run(TINY, options(), reg, on_event=events.append)
        prompts = [body["messages"][-1]["content"] for body in server.requests]
        kernels = reg.run_candidates(summary.run_key)
        versions = reg.active_versions()
        calls = reg.trajectories()
    assert summary.status == "done" and summary.best_candidate_id is not None
    # 6 requests: the 429 was retried inside round 2's draft
    assert len(server.requests) == 6
    assert "does not compile for sm_90" in prompts[1]          # build failure fed back
    assert "mismatch: variant 0: output 0: max abs err" in prompts[2]  # wrong values fed back
    assert "torch-compute: forward computes with PyTorch" in prompts[4]  # the cheat fed back
    assert "your reply could not be used: the reply contains no Python code block" in prompts[5]
    assert [k.stage for k in kernels] == ["build", "compare", "anticheat", "anticheat"]
    assert [k.correct for k in kernels] == [False, False, False, True]
    assert versions[0].candidate_id == summary.best_candidate_id == kernels[-1].candidate_id
    assert summary.promoted["candidate_id"] == summary.best_candidate_id
    assert len(calls) == 5 and calls[-1]["correct"] is True
    assert any(e["node"] == "evaluate" and e.get("correct") for e in events)


def test_unusable_endpoint_fails_the_run_with_one_clear_error(llm_env, isolated_registry):
    with ScriptedLLM([Error(401, "bad key", type="invalid_request_error")]) as server, Registry(isolated_registry) as reg:
        llm_env(server)
        with pytest.raises(DrafterError, match="rejected the API key"):
            start_run(TINY, options(), reg)
        assert reg.list_runs()[0].status == "failed"


def test_no_endpoint_and_no_expert_says_what_to_configure(isolated_registry, monkeypatch):
    monkeypatch.delenv("OPFORGE_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("OPFORGE_LLM_MODEL", raising=False)
    result = subprocess.run([OPFORGE, "run", str(TINY), "--device", "cpu"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith("opforge: error:") and "OPFORGE_LLM_BASE_URL" in result.stderr


def test_killed_run_resumes_without_re_evaluating(llm_env, isolated_registry, tmp_path):
    script = [fenced("wrong_no_mask.py"), fenced("good.py")]
    with ScriptedLLM(script) as server:
        llm_env(server)
        cmd = [OPFORGE, "run", str(TINY), "--drafter", "llm", "--device", "cpu", "--trials", "2",
               "--candidates", "1", "--budget", "4"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())
        run_key = _kill_after_first_evaluation(proc, isolated_registry)
        with Registry(isolated_registry) as reg:
            assert reg.get_run(run_key).status == "running"  # killed mid-run
            before = {k.candidate_id: k.evaluation_id for k in reg.run_candidates(run_key)}
        resumed = subprocess.run([OPFORGE, "run", "--resume", run_key, "--json"], capture_output=True, text=True,
                                 timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    with Registry(isolated_registry) as reg:
        kernels = reg.run_candidates(run_key)
        first = reg.get_candidate(kernels[0].candidate_id)
    assert summary["status"] == "done" and summary["best_candidate_id"] == kernels[-1].candidate_id
    assert len(first.evaluations) == 1  # the evaluation done before the kill was not repeated
    assert kernels[0].evaluation_id == before[kernels[0].candidate_id]
    assert len(server.requests) == 2  # nor was the first draft requested again


def _kill_after_first_evaluation(proc: subprocess.Popen, db: Path) -> str:
    deadline = time.time() + 240
    while time.time() < deadline:
        if db.exists():
            with Registry(db) as reg:
                runs = reg.list_runs()
                if runs and any(k.evaluation_id for k in reg.run_candidates(runs[0].run_key)):
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
                    return runs[0].run_key
        if proc.poll() is not None:
            pytest.fail(f"the run ended (exit {proc.returncode}) before it could be killed")
        time.sleep(0.2)
    proc.kill()
    pytest.fail("no evaluation was recorded in time")


def test_dataset_export_holds_the_whole_trajectory(llm_env, isolated_registry, tmp_path):
    with ScriptedLLM([fenced("wrong_no_mask.py"), fenced("good.py")]) as server, Registry(isolated_registry) as reg:
        llm_env(server)
        start_run(TINY, options(), reg)
    out = tmp_path / "traj.jsonl"
    result = subprocess.run([OPFORGE, "export-dataset", "--out", str(out)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2
    assert rows[0]["correct"] is False and rows[0]["feedback"][0].startswith("mismatch")
    assert rows[1]["correct"] is True and "```python" in rows[1]["reply"]
    assert rows[1]["messages"][-1]["content"].count("mismatch") >= 1  # the prompt held the first feedback
