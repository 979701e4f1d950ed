"""Runs the workbench starts and cancels: cancel_run stops the loop between nodes (in-process and
across processes), a background `opforge run` (agents/background.py) is followed by its key through
the registry, the LLM key never reaches its record, and saved specs (ui/specs.py)."""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from opforge.agents import background
from opforge.agents.background import RunRequest, start_background_run
from opforge.agents.config import Budget, RunOptions
from opforge.agents.run import cancel_run, resume_run, start_run
from conftest import ROOT, TINY
from opforge.harness.errors import OpforgeError, SpecError
from opforge.harness.verify import VerifyOptions
from opforge.registry import Registry
from opforge.ui import specs

SILU = ROOT / "ops" / "silu.py"


def test_cancel_stops_the_loop_after_the_node_it_is_in(isolated_registry):
    with Registry(isolated_registry) as reg:
        def cancel_at_start(event: dict) -> None:
            if event["node"] == "start":
                cancel_run(event["run_key"], reg)

        options = RunOptions(drafter="expert", budget=Budget(rounds=3, candidates=1),
                             verify=VerifyOptions(device="cpu", trials=1), run_key="r-test-cancel")
        summary = start_run(SILU, options, reg, on_event=cancel_at_start)
        assert (summary.run_key, summary.status, summary.promoted) == ("r-test-cancel", "cancelled", None)
        assert reg.run_candidates("r-test-cancel") == []  # stopped after plan: nothing drafted
        assert reg.get_run("r-test-cancel").stop_reason == "cancelled by the user"
        with pytest.raises(OpforgeError, match="already finished"):
            cancel_run("r-test-cancel", reg)
        with pytest.raises(OpforgeError, match="already finished"):
            resume_run("r-test-cancel", reg)
        with pytest.raises(OpforgeError, match="no run"):
            cancel_run("r-nope", reg)


def wait_for(check, timeout: float, what: str):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if (value := check()) is not None:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def test_background_run_is_followed_by_key_and_cancelled_from_another_process(isolated_registry):
    options = RunOptions(budget=Budget(rounds=3, candidates=1), verify=VerifyOptions(device="cpu"))
    launch = start_background_run(RunRequest(str(SILU), options), isolated_registry)
    assert launch.alive and background.background_run(isolated_registry, launch.run_key) == launch
    with Registry(isolated_registry) as reg:
        run = wait_for(lambda: reg.get_run(launch.run_key), 120, "the run row")
        assert run.op == "silu" and run.config["arch"] is None
        cancel_run(launch.run_key, reg)
        wait_for(lambda: True if not launch.alive else None, 180, "the run process to stop")
        assert reg.get_run(launch.run_key).status == "cancelled"
    assert f"run {launch.run_key} cancelled" in background.log_tail(launch)
    assert launch in background.recent_background_runs(isolated_registry)


def test_a_run_that_cannot_start_leaves_its_reason_in_the_log(isolated_registry, tmp_path):
    bad = specs.save_spec("import torch\nx = (\n", "broken.py", isolated_registry)
    launch = start_background_run(RunRequest(str(bad)), isolated_registry)
    wait_for(lambda: True if not launch.alive else None, 120, "the run process to exit")
    assert "syntax error" in background.log_tail(launch)


def test_llm_settings_go_to_the_process_environment_only(isolated_registry, monkeypatch):
    request = RunRequest(str(TINY), RunOptions(drafter="llm", verify=VerifyOptions(arch=80)),
                         llm_base_url="http://127.0.0.1:9/v1", llm_model="m", llm_api_key="sk-secret")
    argv = request.argv(Path(isolated_registry), "r-x")
    assert "sk-secret" not in " ".join(argv) and "sk-secret" not in repr(request)
    assert argv[argv.index("--arch") + 1] == "80" and argv[-2:] == ["--run-key", "r-x"]
    assert request.env()["OPENAI_API_KEY"] == "sk-secret"
    with pytest.raises(OpforgeError, match="endpoint URL and a model"):
        start_background_run(RunRequest(str(TINY), RunOptions(drafter="llm")), isolated_registry)


def test_the_workbench_command_is_opforge_run_with_the_cli_flags():
    from opforge import cli
    from opforge.agents.options import run_options
    from test_options import EVERY_FLAG

    argv = RunRequest(str(SILU), EVERY_FLAG).argv(Path("/tmp/r.db"), "r-x")
    assert argv[1:7] == ["-m", "opforge.cli", "--db", "/tmp/r.db", "run", str(SILU)]
    command = argv[5:]  # what `python -m cli` parses after --db
    args = cli._parser(command).parse_args(command)
    assert run_options(vars(args), run_key=args.run_key) == replace(EVERY_FLAG, run_key="r-x")


def test_saved_specs_are_named_by_content_and_checked_by_the_spec_loader(isolated_registry):
    first = specs.save_spec(TINY.read_text(), "my op!.py", isolated_registry)
    assert first == specs.save_spec(TINY.read_text(), "my op!.py", isolated_registry)
    # The file stem stays the op's name (a spec without OPFORGE["name"]); the content picks the folder.
    assert first.name == "my_op.py" and first.parent.parent == isolated_registry.parent / "specs"
    other = specs.save_spec(TINY.read_text() + "\n# edited\n", "my op!.py", isolated_registry)
    assert other.name == "my_op.py" and other != first
    assert specs.validate_spec(first, "cpu").n_variants >= 1
    with pytest.raises(SpecError, match="no `class Model"):
        specs.validate_spec(specs.save_spec("x = 1\n", "empty.py", isolated_registry), "cpu")


def test_opforge_cancel_and_ui_on_the_command_line(isolated_registry, monkeypatch):
    from opforge import cli
    from opforge.ui.server import APP, server_command

    with Registry(isolated_registry) as reg:
        spec = reg.record_spec("silu", str(SILU), SILU.read_text())
        reg.create_run("r-cli", "silu", spec, "triton", "expert", "cpu/x", {})
    assert cli.main(["--db", str(isolated_registry), "cancel", "r-cli"]) == 0
    assert cli.main(["--db", str(isolated_registry), "cancel", "r-cli"]) == 2  # one line: already finished
    with Registry(isolated_registry) as reg:
        assert reg.get_run("r-cli").status == "cancelled"
    argv, env = server_command(isolated_registry, 8765)
    assert argv[1:4] == ["-m", "streamlit", "run"] and str(APP) in argv and "8765" in argv
    assert env["OPFORGE_DB"] == str(isolated_registry)
    calls = []
    monkeypatch.setattr("subprocess.call", lambda argv, env: calls.append((argv, env)) or 0)
    assert cli.main(["--db", str(isolated_registry), "ui", "--port", "8765"]) == 0
    assert calls and calls[0][1]["OPFORGE_DB"] == str(isolated_registry)
