"""The workbench's pages under Streamlit's AppTest (no browser): empty registry, bad spec input,
a seeded registry with a run, reviews, promotion and export. Rows are recorded through the
Registry API with a real verdict (tests/data/verdict_softmax_cpu.json, from `opforge verify
ops/softmax.py backends/triton/knowledge/softmax.py --json`)."""
from __future__ import annotations

import copy
import json

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from opforge.agents.drafters.base import LLMCall  # noqa: E402
from opforge.registry import Registry  # noqa: E402
from tests.conftest import DATA, ROOT  # noqa: E402

PAGES = ("request", "watch", "review", "export")
VERDICT = json.loads((DATA / "verdict_softmax_cpu.json").read_text())
CPU = "cpu/x86_64/triton-interpreter"
GPU = "cuda/NVIDIA H200/sm_90"


def open_page(name: str, **query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "opforge" / "app.py"), default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    return at.switch_page(f"ui/pages/{name}.py").run()


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def no_exception(at: AppTest) -> AppTest:
    assert not at.exception, texts(at.exception)
    return at


@pytest.fixture
def seeded(isolated_registry):
    """softmax: a run with two candidates (one correct on the CPU and timed on a GPU, one failed),
    an LLM call behind the second; nothing promoted."""
    good = (ROOT / "opforge/backends/triton/knowledge/softmax.py").read_text()
    timed = copy.deepcopy(VERDICT) | {"hardware": GPU, "stage": "profile", "timings": {
        "kernel_ms": 0.05, "eager_ms": 0.08, "compile_ms": 0.06, "speedup_eager": 1.6, "speedup_compile": 1.2}}
    failed = copy.deepcopy(VERDICT) | {"correct": False, "stage": "compare",
                                        "reasons": ["variant 2: max abs err 3.1e-02 at [3, 7] (atol 1e-04)"]}
    with Registry(isolated_registry) as reg:
        spec = reg.record_spec("softmax", str(ROOT / "ops/softmax.py"), (ROOT / "ops/softmax.py").read_text())
        run = reg.create_run("r-20250101-abcdef", "softmax", spec, "triton", "llm", CPU, {"budget": {"rounds": 3}})
        first = reg.record_candidate(spec, good, "triton", "llm", run_id=run.id, round=0)
        second = reg.record_candidate(spec, good.replace("BLOCK", "TILE"), "triton", "llm", parent_id=first,
                                      run_id=run.id, round=1)
        reg.record_evaluation(first, CPU, {}, VERDICT)
        reg.record_evaluation(first, GPU, {}, timed)
        reg.record_evaluation(second, CPU, {}, failed)
        reg.record_llm_call(run.id, second, 1, LLMCall(
            model="test-model", temperature=0.2, reply="```python\n# the kernel\n```", prompt_tokens=900,
            completion_tokens=300, latency_s=2.5,
            messages=({"role": "system", "content": "You write Triton."}, {"role": "user", "content": "softmax please"})))
        reg.update_run(run.run_key, best_candidate_id=first, add_tokens=1200)
    return {"run": run.run_key, "good": first, "failed": second}


@pytest.mark.parametrize("page", PAGES)
def test_every_page_has_an_empty_state(page):
    at = no_exception(open_page(page))
    assert not at.error
    if page != "request":
        assert at.info, f"{page}: no empty-state message"


def test_sidebar_shows_the_registry_and_the_sandbox(isolated_registry):
    at = no_exception(open_page("review"))
    sidebar = texts(at.sidebar.caption)
    assert str(isolated_registry) in sidebar and "Sandbox" in sidebar


def test_request_validates_a_suite_spec_and_enables_start():
    at = no_exception(open_page("request"))
    at.selectbox[0].select("silu").run()
    assert "silu" in texts(at.success) and "valid spec" in texts(at.success)
    assert not at.button[0].disabled


@pytest.mark.parametrize("source, message", [
    ("import torch\nclass Model(torch.nn.Module)\n", "syntax error"),
    ("import torch\ndef get_inputs():\n    return [torch.randn(4)]\n", "no `class Model"),
    ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
     "def get_inputs():\n    return 3\n", "get_inputs() must return a list"),
])
def test_request_shows_the_spec_loaders_error_for_bad_input(source, message):
    at = no_exception(open_page("request"))
    at.radio[0].set_value("Write one").run()
    at.text_area[0].input(source).run()
    assert message in texts(at.error)
    assert not at.success
    assert at.button[0].disabled


def test_request_llm_settings_are_asked_for():
    at = no_exception(open_page("request"))
    assert at.radio[1].options == ["Offline expert (no LLM needed)", "LLM endpoint (OpenAI-compatible)"]
    at.radio[1].set_value("llm").run()
    labels = [t.label for t in at.text_input]
    assert "Base URL" in labels and "Model" in labels


def test_request_starts_the_run_with_the_cli_flags_and_defaults(monkeypatch, isolated_registry):
    from opforge import cli
    from opforge.agents import background
    from opforge.agents.config import Budget, RunOptions
    from opforge.agents.options import run_options
    from opforge.harness.verify import VerifyOptions

    started = []
    monkeypatch.setattr(background, "_spawn", lambda argv, env, db, key, spec: started.append(argv) or
                        background.BackgroundRun(key, 0, "", spec, 0.0))
    at = no_exception(open_page("request"))
    assert [n.value for n in at.number_input] == [Budget().rounds, Budget().candidates, Budget().wall_s]
    at.selectbox[0].select("silu").run()
    at.number_input[0].set_value(1).run()
    [device] = [s for s in at.selectbox if s.label == "Run on"]
    device.select("cpu").run()
    at.button[0].click().run()
    (argv,) = started
    command = argv[argv.index("run"):]
    args = cli._parser(command).parse_args(command)
    assert run_options(vars(args)) == RunOptions(drafter="expert", budget=Budget(rounds=1),
                                                 verify=VerifyOptions(device="cpu"))


def test_watch_shows_rounds_best_tokens_and_cancels(seeded, isolated_registry):
    at = no_exception(open_page("watch", run=seeded["run"]))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Status"] == "running" and metrics["Tokens"] == "1,200"
    assert metrics["Best candidate"] == f"#{seeded['good']}"
    assert len(at.dataframe) >= 2  # the runs list and one table per round
    at.button(key="cancel").click().run()
    with Registry(isolated_registry) as reg:
        assert reg.get_run(seeded["run"]).status == "cancelled"


def test_review_shows_source_verification_metrics_timings_and_conversation(seeded):
    at = no_exception(open_page("review", candidate=str(seeded["failed"])))
    assert "Candidate #%d" % seeded["failed"] in texts(at.markdown)
    assert "TILE" in texts(el for el in at.code if el.language == "python")  # the source
    (diff,) = [el.value.splitlines() for el in at.code if el.language == "diff"]  # against its parent
    assert diff[:2] == [f"--- #{seeded['good']}", f"+++ #{seeded['failed']}"]
    assert "-    cols = tl.arange(0, BLOCK)" in diff and "+    cols = tl.arange(0, TILE)" in diff
    removed = [line[1:] for line in diff[2:] if line.startswith("-")]
    parent = (ROOT / "opforge/backends/triton/knowledge/softmax.py").read_text().splitlines()
    assert removed == [line for line in parent if "BLOCK" in line]  # exactly the renamed lines changed
    assert [line[1:] for line in diff[2:] if line.startswith("+")] == [line.replace("BLOCK", "TILE") for line in removed]
    assert "variant 2: max abs err" in texts(at.error)
    assert "softmax please" in texts(at.markdown) and "test-model" in texts(at.caption)  # the conversation
    assert "No LLM conversation" not in texts(at.info)
    assert "No GPU timings yet" in texts(at.info)


def test_review_plots_timings_where_they_exist(seeded):
    at = no_exception(open_page("review", candidate=str(seeded["good"])))
    assert "No GPU timings yet" not in texts(at.info)
    assert "No LLM conversation: this candidate was drafted offline" in texts(at.info)  # none behind it
    frames = [f.value for f in at.dataframe]
    assert any("series" in f.columns and set(f["series"]) == {"kernel", "PyTorch eager", "torch.compile"}
               for f in frames)
    assert any("registers" in f.columns for f in frames)  # compile metrics


def test_review_reject_needs_a_comment_then_approve_and_promote(seeded, isolated_registry):
    at = no_exception(open_page("review", candidate=str(seeded["good"])))
    at.button(key="reject").click().run()
    assert "needs a comment" in texts(at.error)
    at.text_input[0].input("registers look high").run()
    at.button(key="reject").click().run()
    assert "Rejected" in texts(at.success)
    at.button(key="approve").click().run()
    at.button(key="promote").click().run()
    assert "Promoted: softmax v1" in texts(at.success)
    with Registry(isolated_registry) as reg:
        assert [r.decision for r in reg.reviews(seeded["good"])] == ["approved", "rejected"]
        assert [v.candidate_id for v in reg.active_versions()] == [seeded["good"]]


def test_review_refuses_to_promote_a_failed_candidate_with_a_message(seeded):
    at = no_exception(open_page("review", candidate=str(seeded["failed"])))
    at.button(key="promote").click().run()
    assert f"candidate {seeded['failed']}" in texts(at.error)  # one line from the registry, no traceback


def test_export_builds_the_library_and_offers_the_wheel(seeded, isolated_registry):
    with Registry(isolated_registry) as reg:
        reg.promote(seeded["good"])
    at = no_exception(open_page("export"))
    assert any("softmax" in f.value.to_string() for f in at.dataframe)
    at.button[0].click().run()
    no_exception(at)
    assert "Built **kernels_generated** with 1 op(s)" in texts(at.success), texts(at.error)
    assert at.get("download_button")


def test_op_summaries_count_candidates_verified_and_active(seeded, isolated_registry):
    with Registry(isolated_registry) as reg:
        (before,) = reg.op_summaries()
        reg.promote(seeded["good"])
        (after,) = reg.op_summaries()
    assert (before.op, before.candidates, before.verified, before.active_versions) == ("softmax", 2, 1, 0)
    assert before.best_speedup_eager == 1.6 and after.active_versions == 1
    assert before.last_activity.tzinfo is not None


def test_watch_offers_resume_when_the_run_process_is_gone(seeded, isolated_registry):
    import subprocess
    import sys

    from opforge.agents.background import BackgroundRun, _records

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    record = BackgroundRun(seeded["run"], int(gone.stdout), str(isolated_registry.parent / "x.log"), "ops/softmax.py", 0.0)
    (_records(isolated_registry) / f"{seeded['run']}.json").write_text(json.dumps(record.__dict__))
    at = no_exception(open_page("watch", run=seeded["run"]))
    assert {m.label: m.value for m in at.metric}["Status"] == "process gone — resume it"
    assert at.button(key="resume") and not [b for b in at.button if b.key == "cancel"]


def test_review_shows_each_candidates_level_badge_and_ladder_steps(seeded, isolated_registry):
    # `seeded` holds verdicts from before the ladder (no level): they show "—"; a new one shows its pill.
    laddered = copy.deepcopy(VERDICT) | {"level": "emulated", "verified_on": "cpu:triton-interpreter-3.5.0", "stages": {
        "static": {"status": "passed", "tool": "opforge-static", "version": "1", "seconds": 0.01, "reason": None},
        "cpu_run": {"status": "passed", "tool": "triton-interpreter", "version": "3.5.0", "seconds": 2.5, "reason": None},
        "device_run": {"status": "skipped", "tool": None, "version": None, "seconds": None, "reason": "no GPU here"}}}
    with Registry(isolated_registry) as reg:
        reg.record_evaluation(seeded["good"], CPU, {}, laddered)
    at = no_exception(open_page("review", candidate=str(seeded["good"])))
    badges = [m.value for m in at.markdown if "-badge[" in str(m.value)]
    pill, legacy = ":blue-badge[emulated · cpu:triton-interpreter-3.5.0]", ":gray-badge[level —]"
    # The candidate's (its latest evaluation's), then each evaluation's, newest first.
    assert badges == [pill, pill, legacy, legacy], badges
    frames = [f.value for f in at.dataframe]
    (candidates,) = [f for f in frames if "drafter" in f.columns]
    assert dict(zip(candidates["id"], candidates["level"])) == {
        seeded["good"]: "emulated · cpu:triton-interpreter-3.5.0", seeded["failed"]: "—"}
    (steps,) = [f for f in frames if "step" in f.columns and "status" in f.columns]
    assert list(steps["step"]) == ["static", "cpu_run", "device_run"]
    assert list(steps["reason"])[-1] == "no GPU here"


def test_a_candidate_nothing_could_check_here_is_a_warning_not_a_failure(seeded, isolated_registry):
    """A verdict where no step failed but none that checks the numbers could run (`opforge verify`
    exits 3) is "not verifiable here" in yellow, with its level, and its reason a warning, not an error."""
    why = "unverifiable: AscendC cannot be compiled or run here: bisheng ships only in the CANN toolkit"
    skipped = {"status": "skipped", "tool": "bisheng", "version": None, "seconds": None, "reason": why[14:]}
    unverifiable = {k: v for k, v in copy.deepcopy(VERDICT).items() if k != "stage"} | {
        "correct": False, "reasons": [why], "failed_step": None, "level": "static", "timings": None, "steps": {
            "static": {"status": "passed", "tool": "opforge-static", "version": "1", "seconds": 0.5, "reason": None},
            "compile": skipped, "cpu_run": skipped}}
    with Registry(isolated_registry) as reg:
        reg.record_evaluation(seeded["failed"], CPU, {}, unverifiable)
    at = no_exception(open_page("review", candidate=str(seeded["failed"])))
    assert f"### Candidate #{seeded['failed']} — 🟡 not verifiable here" in texts(at.markdown)
    assert why in texts(at.warning) and why not in texts(at.error)
    (candidates,) = [f.value for f in at.dataframe if "drafter" in f.value.columns]
    row = candidates[candidates["id"] == seeded["failed"]].iloc[0]
    assert row["verdict"] == "🟡 not verifiable here" and row["level"] == "static", dict(row)
