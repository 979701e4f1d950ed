"""Options are checked where they are defined: VerifyOptions, Budget, RunOptions and the DRAFTERS
table refuse a bad value with one line, whoever builds them (the CLI, batch, the workbench, a
library caller); `run` and `batch` share one table of flags (the workbench's command: test_ui_runs);
and a run whose verification compares no variant promotes nothing, even for a caller past the check."""
from __future__ import annotations

from dataclasses import replace

import pytest

from opforge import cli
from opforge.agents.config import Budget, RunOptions
from opforge.agents.drafters.base import DrafterError
from opforge.agents.drafters.select import DRAFTERS, recorded_endpoint, select_drafter
from opforge.agents.options import LOOP_FLAGS, run_argv, run_options
from opforge.agents.run import start_run
from conftest import ROOT
from opforge.harness.errors import OpforgeError
from opforge.harness.verify import VerifyOptions
from opforge.registry import Registry

SILU = ROOT / "ops" / "silu.py"


@pytest.mark.parametrize("make, message", [
    (lambda: VerifyOptions(trials=0), "trials must be an integer of at least 1, got 0"),
    (lambda: VerifyOptions(trials=True), "trials must be an integer of at least 1, got True"),
    (lambda: VerifyOptions(backend="metal"), "unknown backend 'metal' (known: triton, cuda, triton_ascend, ascendc)"),
    (lambda: VerifyOptions(device="gpu"), "unknown device 'gpu' (known: auto, cpu)"),
    (lambda: VerifyOptions(sandbox="vm"), "unknown sandbox runtime 'vm' (known: auto, docker, jail, none)"),
    (lambda: VerifyOptions(timeout_s=0), "timeout must be a positive number of seconds, got 0"),
    (lambda: VerifyOptions(arch=-90), "arch must be a positive integer such as 90 (sm_90), got -90"),
    (lambda: VerifyOptions(seed="7"), "seed must be an integer, got '7'"),
    (lambda: Budget(rounds=0), "budget: rounds must be an integer of at least 1, got 0"),
    (lambda: Budget(plateau_rounds=0), "budget: plateau_rounds must be an integer of at least 1, got 0"),
    (lambda: Budget(wall_s=float("nan")), "budget: wall_s must be a positive number, got nan"),
    (lambda: Budget(target_speedup=0.0), "budget: target_speedup must be a positive number, got 0.0"),
    (lambda: RunOptions(drafter="gpt"), "unknown drafter 'gpt' (known: expert, llm)"),
    (lambda: run_options({"trials": 0}), "trials must be an integer of at least 1, got 0"),
])
def test_a_bad_option_is_one_line_naming_it_and_what_is_allowed(make, message):
    with pytest.raises(OpforgeError) as raised:
        make()
    assert str(raised.value) == message


def test_auto_is_one_device_and_the_defaults_are_the_dataclasses():
    assert VerifyOptions(device="auto") == VerifyOptions() and VerifyOptions(device="auto").device is None
    assert run_options({}) == RunOptions()
    defaults = {flag.dest: flag.default for flag in LOOP_FLAGS}
    assert (defaults["trials"], defaults["budget"], defaults["wall"]) == (VerifyOptions().trials, Budget().rounds,
                                                                         Budget().wall_s)


def test_the_drafters_table_names_the_known_drafters():
    assert list(DRAFTERS) == ["expert", "llm"]
    with pytest.raises(DrafterError, match=r"^unknown drafter 'gpt' \(known: expert, llm\)$"):
        select_drafter("gpt")
    drafter, note = select_drafter("expert")
    assert drafter.name == "expert" and note is None and recorded_endpoint(drafter) is None
    assert DRAFTERS["llm"].needs_endpoint and not DRAFTERS["expert"].needs_endpoint


# A value for every loop flag (none left at None), so a flag a command dropped would show.
EVERY_FLAG = RunOptions(drafter="llm", budget=Budget(rounds=3, candidates=1, wall_s=120.0, tokens=5000,
                                                      target_speedup=1.5),
                        verify=VerifyOptions(device="cpu", sandbox="none", trials=2, arch=80))


def test_run_and_batch_take_the_same_flags_and_run_argv_gives_them_back():
    flags = run_argv(EVERY_FLAG)
    assert {flag.flag for flag in LOOP_FLAGS} <= set(flags)  # every loop option, none left out
    run = ["run", str(SILU), "--run-key", "r-x", *flags]
    args = cli._parser(run).parse_args(run)
    assert run_options(vars(args), run_key=args.run_key) == replace(EVERY_FLAG, run_key="r-x")
    batch = ["batch", str(SILU), *flags]
    assert run_options(vars(cli._parser(batch).parse_args(batch))) == EVERY_FLAG
    with pytest.raises(ValueError, match="no flag for verify.seed"):  # refused, never silently dropped
        run_argv(RunOptions(verify=VerifyOptions(seed=3)))


def test_a_run_that_compares_no_variant_promotes_nothing(isolated_registry):
    options = RunOptions(drafter="expert", budget=Budget(rounds=1, candidates=1),
                         verify=VerifyOptions(device="cpu", sandbox="none", trials=1))
    object.__setattr__(options.verify, "trials", 0)  # a caller past VerifyOptions' own check
    with Registry(isolated_registry) as reg:
        summary = start_run(SILU, options, reg)
        (candidate,) = reg.run_candidates(summary.run_key)
    assert (summary.best_candidate_id, summary.promoted) == (None, None)
    assert candidate.correct is False and candidate.first_reason.startswith("no-variants"), candidate
    assert not candidate.active
