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

from opforge.agents.config import Budget
from opforge.agents.drafters.base import DrafterError
from opforge.agents.graph import build_graph
from opforge.agents.run import RunOptions, resume_run, start_run
from conftest import KERNELS, ROOT, TINY, default_sigint
from opforge.harness.verify import VerifyOptions
from llm_server import Error, ScriptedLLM
from opforge.registry import Registry

OPFORGE = str(Path(sys.executable).parent / "opforge")


def fenced(name: str) -> str:
    return f"Here is my kernel.\n\n```python\n{(KERNELS / name).read_text()}\n```\n"


def fenced_text(source: str) -> str:
    return f"Here is my kernel.\n\n```python\n{source}```\n"


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
    assert "I think the kernel should use a block size of 64." in prompts[5]  # what came back, shown
    # the prose reply is kept as a candidate whose failed step is draft, never run
    assert [(k.failed_step, k.failed_check) for k in kernels] == [
        ("compile", "build"), ("cpu_run", "compare"), ("cpu_run", "anticheat"), ("draft", "reply"), (None, None)]
    assert [k.correct for k in kernels] == [False, False, False, False, True]
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


def test_without_an_endpoint_the_expert_drafts_verifies_and_promotes(isolated_registry, monkeypatch):
    monkeypatch.delenv("OPFORGE_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("OPFORGE_LLM_MODEL", raising=False)
    result = subprocess.run([OPFORGE, "run", str(ROOT / "ops" / "silu.py"), "--device", "cpu", "--trials", "2"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "using the offline expert drafter" in result.stdout and "promoted silu v1" in result.stdout
    with Registry(isolated_registry) as reg:
        version = reg.active_versions()[0]
        candidate = reg.get_candidate(version.candidate_id)
    assert candidate.drafter == "expert" and candidate.meta["config"]["BLOCK"] > 0
    assert "Generated by opforge's offline expert" in candidate.source


def test_unsupported_op_stops_with_the_aten_ops_named(isolated_registry, monkeypatch, tmp_path):
    monkeypatch.delenv("OPFORGE_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("OPFORGE_LLM_MODEL", raising=False)
    spec = tmp_path / "inverse.py"  # a matrix inverse: no expert family generates linear algebra
    spec.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                    "        return torch.linalg.inv(x)\ndef get_inputs():\n    return [torch.randn(8, 33, 33)]\n")
    result = subprocess.run([OPFORGE, "run", str(spec), "--device", "cpu"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "unsupported" in result.stdout and "aten.linalg_inv_ex" in result.stdout


def test_killed_run_resumes_without_re_evaluating(llm_env, isolated_registry, tmp_path):
    # The kill lands anywhere after the first evaluation, perhaps between the second draft's reply
    # and its checkpoint: then the resumed run asks for that draft again, so the server never runs
    # dry (it repeats the good kernel) and the check allows that one repeated draft.
    with ScriptedLLM([fenced("wrong_no_mask.py")], default=fenced("good.py")) as server:
        llm_env(server)
        cmd = [OPFORGE, "run", str(TINY), "--drafter", "llm", "--device", "cpu", "--trials", "2",
               "--candidates", "1", "--budget", "4"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())
        run_key = _kill_after_first_evaluation(proc, isolated_registry)
        with Registry(isolated_registry) as reg:
            assert reg.get_run(run_key).status == "running"  # killed mid-run
            before = {k.candidate_id: k.evaluation_id for k in reg.run_candidates(run_key)}
        # The endpoint is gone from the environment: the run recorded it (never the key) and resumes there.
        env = {k: v for k, v in os.environ.items() if k not in ("OPFORGE_LLM_BASE_URL", "OPFORGE_LLM_MODEL")}
        resumed = subprocess.run([OPFORGE, "run", "--resume", run_key, "--json"], capture_output=True, text=True,
                                 timeout=300, env=env)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    with Registry(isolated_registry) as reg:
        kernels = reg.run_candidates(run_key)
        first = reg.get_candidate(kernels[0].candidate_id)
    assert summary["status"] == "done" and summary["best_candidate_id"] == kernels[-1].candidate_id
    assert len(first.evaluations) == 1  # the evaluation done before the kill was not repeated
    assert kernels[0].evaluation_id == before[kernels[0].candidate_id]
    assert_resumed_drafts(server.requests, len(kernels))


def assert_resumed_drafts(requests: list[dict], candidates: int) -> None:
    """What the README's resume promise allows of the drafts: the first (already evaluated) never
    asked for again, and at most the one in flight at the kill asked for twice, with the same prompt."""
    prompts = [r["messages"] for r in requests]
    assert prompts.count(prompts[0]) == 1, "the evaluated first draft was requested again"
    assert len(prompts) in (2, 3) and len(set(map(json.dumps, prompts[1:]))) == 1, prompts
    assert candidates == 2, "a repeated draft became a candidate of its own"


def test_run_killed_while_drafting_asks_for_that_draft_once_more(llm_env, isolated_registry):
    """The kill lands deterministically inside the second draft's request (the race the test above
    only sometimes hits): the resumed run repeats exactly that request and finishes."""
    child: dict = {}

    def kill_at_second(number: int) -> None:
        if number == 2:
            child["proc"].kill()

    with ScriptedLLM([fenced("wrong_no_mask.py")], default=fenced("good.py"), on_request=kill_at_second) as server:
        llm_env(server)
        child["proc"] = subprocess.Popen(
            [OPFORGE, "run", str(TINY), "--drafter", "llm", "--device", "cpu", "--trials", "2", "--candidates", "1",
             "--budget", "4", "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        out, _ = child["proc"].communicate(timeout=300)
        assert child["proc"].returncode == -signal.SIGKILL, out
        with Registry(isolated_registry) as reg:
            (run,) = reg.list_runs()
        resumed = subprocess.run([OPFORGE, "run", "--resume", run.run_key, "--json"], capture_output=True, text=True,
                                 timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    with Registry(isolated_registry) as reg:
        kernels = reg.run_candidates(run.run_key)
        evaluations = [len(reg.get_candidate(k.candidate_id).evaluations) for k in kernels]
    assert json.loads(resumed.stdout)["best_candidate_id"] == kernels[-1].candidate_id and evaluations == [1, 1]
    assert len(server.requests) == 3
    assert_resumed_drafts(server.requests, len(kernels))


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


SILU = (ROOT / "opforge" / "backends" / "triton" / "knowledge" / "silu.py").read_text()
SILU_BROKEN = SILU.replace("    def forward(self, x):", "    def forward(self, x)")  # no colon
SILU_WRONG = SILU.replace("y = x / (1.0 + tl.exp(-x))", "y = x / (1.0 + tl.exp(x))")


def test_each_failure_shows_its_code_and_feedback_in_the_next_prompt(llm_env, isolated_registry, tmp_path):
    broken_line = SILU_BROKEN.splitlines().index("    def forward(self, x)") + 1
    parse_error = f"the code does not parse: line {broken_line}: expected ':'"
    with ScriptedLLM([fenced_text(SILU_BROKEN), fenced_text(SILU_WRONG), fenced_text(SILU)]) as server:
        llm_env(server)
        result = subprocess.run(
            [OPFORGE, "run", str(ROOT / "ops" / "silu.py"), "--drafter", "llm", "--sandbox", "none", "--device", "cpu",
             "--trials", "2", "--candidates", "1", "--budget", "3", "--json"], capture_output=True, text=True, timeout=300)
        prompts = [body["messages"][-1]["content"] for body in server.requests]
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout)
    assert len(prompts) == 3
    assert f">> {broken_line} |     def forward(self, x)" in prompts[1]  # the broken code, numbered and marked
    assert "    def __init__(self):" in prompts[1] and parse_error in prompts[1]
    assert "y = x / (1.0 + tl.exp(x))" in prompts[2]  # the wrong kernel's code ...
    assert "INCORRECT: cpu_run failed (compare)" in prompts[2] and "mismatch" in prompts[2]  # ... and its verdict
    with Registry(isolated_registry) as reg:
        kernels = reg.run_candidates(summary["run_key"])
        broken = reg.get_candidate(kernels[0].candidate_id)
        active = [v.candidate_id for v in reg.active_versions()]
    assert summary["status"] == "done" and summary["best_candidate_id"] == kernels[2].candidate_id
    assert [(k.failed_step, k.failed_check, k.correct) for k in kernels] == [
        ("draft", "reply", False), ("cpu_run", "compare", False), (None, None, True)]
    assert broken.source.strip() == SILU_BROKEN.strip() and [e.reasons for e in broken.evaluations] == [[parse_error]]
    assert active == [kernels[2].candidate_id]  # the candidate that failed at draft was never promoted
    out = tmp_path / "traj.jsonl"
    subprocess.run([OPFORGE, "export-dataset", "--out", str(out)], check=True, capture_output=True, timeout=60)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["candidate_id"] for r in rows] == [k.candidate_id for k in kernels]
    assert rows[0]["failed_step"] == "draft" and rows[0]["correct"] is False and rows[0]["feedback"] == [parse_error]


def test_ctrl_c_says_how_to_resume_and_the_run_resumes(isolated_registry, monkeypatch):
    monkeypatch.delenv("OPFORGE_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("OPFORGE_LLM_MODEL", raising=False)
    proc = subprocess.Popen([OPFORGE, "run", str(ROOT / "ops" / "silu.py"), "--device", "cpu", "--trials", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    for line in proc.stdout:  # interrupt once drafting is done and the evaluation has begun
        if " draft " in line:
            proc.send_signal(signal.SIGINT)
            break
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    run_key = err.strip().split("opforge run --resume ")[1].split()[0]
    resumed = subprocess.run([OPFORGE, "run", "--resume", run_key], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "promoted silu v1" in resumed.stdout
