"""`opforge batch --executor ray` on a local Ray instance, and the run export/import it rests on: a
worker's run (candidates, verdicts, LLM calls, promotion) arrives whole in the driver's registry.
Ray is a dev dependency: in CI (OPFORGE_CI) a missing ray fails these tests instead of skipping."""
from __future__ import annotations

import json

import pytest

from opforge import cli
from opforge.agents.config import Budget
from opforge.agents.run import RunOptions, start_run
from conftest import KERNELS, SPECS, TINY
from opforge.harness.verify import VerifyOptions
from llm_server import ScriptedLLM
from opforge.registry import Registry, RegistryError

FAST = ["--drafter", "expert", "--device", "cpu", "--trials", "1", "--budget", "1", "--candidates", "1"]


@pytest.mark.xdist_group("ray")  # beside the reward server's Ray test: one local Ray instance, shared (conftest.local_ray)
def test_ray_batch_brings_every_run_home_and_a_rerun_skips(isolated_registry, capsys, local_ray):
    first = cli.main(["batch", str(SPECS), "--executor", "ray", "--json", *FAST])
    report = json.loads(capsys.readouterr().out)
    second = cli.main(["batch", str(SPECS), "--executor", "ray", "--json", *FAST])
    rerun = json.loads(capsys.readouterr().out)
    assert first == 0, report
    rows = {r["op"]: r for r in report["rows"]}
    assert report["executor"] == "ray" and set(rows) == {"tiny_softmax", "tiny_silu"}
    assert {r["status"] for r in rows.values()} == {"verified"}
    with Registry(isolated_registry) as reg:
        runs = {r.op: r for r in reg.list_runs()}
        active = {v.op: v.candidate_id for v in reg.active_versions()}
        kernels = {op: reg.run_candidates(run.run_key) for op, run in runs.items()}
    assert set(runs) == set(rows) and {r.status for r in runs.values()} == {"done"}
    for op, run in runs.items():
        assert run.config["spec_path"] == str(SPECS / f"{op}.py")  # the driver's path, not the worker's scratch
        assert rows[op]["run_key"] == run.run_key and rows[op]["best_candidate_id"] == run.best_candidate_id
        assert active[op] == run.best_candidate_id  # the worker's promotion was repeated here
        assert [k.candidate_id for k in kernels[op] if k.correct] == [run.best_candidate_id]
        assert kernels[op][-1].hardware == report["hardware"]
    assert second == 0 and [r["status"] for r in rerun["rows"]] == ["skipped", "skipped"]
    assert {r["best_candidate_id"] for r in rerun["rows"]} == {r.best_candidate_id for r in runs.values()}


def test_an_exported_run_imports_whole_into_another_registry(tmp_path, isolated_registry, monkeypatch):
    fenced = [f"```python\n{(KERNELS / name).read_text()}\n```" for name in ("wrong_no_mask.py", "good.py")]
    options = RunOptions(drafter="llm", budget=Budget(rounds=3, candidates=1), verify=VerifyOptions(device="cpu", trials=1))
    with ScriptedLLM(fenced) as server, Registry(tmp_path / "worker" / "opforge.db") as worker:
        monkeypatch.setenv("OPFORGE_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("OPFORGE_LLM_MODEL", "scripted")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        summary = start_run(TINY, options, worker)
        bundle = json.loads(json.dumps(worker.export_run(summary.run_key)))  # what crosses the network
        expected = worker.trajectories()
    with Registry(isolated_registry) as reg:
        other = reg.record_spec("other", "other.py", "# another op, so the ids here differ from the worker's\n")
        reg.record_candidate(other, "# a kernel", "triton", "user")
        run = reg.import_run(bundle, spec_path="ops/tiny_softmax.py")
        kernels = reg.run_candidates(run.run_key)
        calls = reg.trajectories()
        with pytest.raises(RegistryError, match="already exists"):
            reg.import_run(bundle)
        assert len(reg.list_kernels()) == 3  # the refused import added nothing
        active = reg.active_versions()
    assert run.status == "done" and run.config["spec_path"] == "ops/tiny_softmax.py"
    assert [(k.correct, k.failed_step, k.failed_check) for k in kernels] == [(False, "cpu_run", "compare"), (True, None, None)]
    assert run.best_candidate_id == kernels[-1].candidate_id != summary.best_candidate_id
    assert [c["candidate_id"] for c in calls] == [k.candidate_id for k in kernels]  # calls point at the new ids
    strip = lambda rows: [{k: v for k, v in r.items() if k != "candidate_id"} for r in rows]  # noqa: E731
    assert strip(calls) == strip(expected)
    assert [(v.op, v.candidate_id) for v in active] == [("tiny_softmax", run.best_candidate_id)]
