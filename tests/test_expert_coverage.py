"""benchmarks/expert_coverage.py: which specs each --set runs, the kernels counted per candidate
(the drafter's meta, else the source's @triton.jit functions, read back from a real registry), the
per-set targets, and the fusion and level-3 spec sets loading and running their references."""
from __future__ import annotations

import importlib.util

import pytest
import torch

from conftest import ROOT
from opforge.agents.run import RunSummary
from opforge.harness.mode import set_mode
from opforge.harness.spec import input_lists, load_spec
from opforge.registry import Registry


def _script():
    spec = importlib.util.spec_from_file_location("expert_coverage", ROOT / "benchmarks" / "expert_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COV = _script()
SPECS = ROOT / "benchmarks" / "expert_specs"

TWO_KERNELS = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pass


@triton.jit(do_not_specialize=["n"])
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pass


def _launch(x):  # a launcher, not a kernel
    return x


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return _launch(x)
'''


def test_each_set_selects_the_specs_where_they_lie():
    fusion, level3, base = COV.default_specs("fusion"), COV.default_specs("level3"), COV.default_specs("base")
    assert len(fusion) >= 42 and all(p.parent == SPECS / "fusion" for p in fusion)
    assert len(level3) >= 10 and all(p.parent == SPECS / "level3" for p in level3)
    assert SPECS / "relu.py" in base and ROOT / "ops" / "softmax.py" in base
    assert not any(p.name.startswith("indexmap_") or p.parent not in (SPECS, ROOT / "ops") for p in base)
    everything = COV.default_specs("all")
    assert set(fusion) | set(level3) | set(base) <= set(everything) == set(COV.all_specs())
    assert COV.spec_set(SPECS / "indexmap_gather_rows.py") == "indexmap"
    assert COV.spec_set(SPECS / "conv" / "conv2d_any.py") == "conv"
    assert COV.spec_set(ROOT / "tests" / "data" / "specs" / "tiny_softmax.py") == "other"
    serving = COV.default_specs("serving")
    assert len(serving) >= 16 and all(p.parent == ROOT / "ops" / "serving" for p in serving)
    assert COV.spec_set(SPECS / "serving" / "any_rope.py") == "serving-extra"
    from benchmarks.coverage_report import target_of
    assert target_of("serving") == target_of("serving-extra") == 0.80 > target_of("base")
    args, paths = COV.parse_args(["--set", "level3", "--only", "attention"])
    assert paths and all("attention" in p.name and p.parent == SPECS / "level3" for p in paths)


@pytest.mark.parametrize("argv", [["--set", "nonesuch"], ["--set", "fusion", "--specs", "ops/relu.py"]])
def test_a_bad_set_is_one_line_and_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        COV.parse_args(argv)
    assert exc.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()[-1]) < 200


def test_kernels_are_the_meta_count_else_the_jit_functions():
    assert COV.kernels_in(None, TWO_KERNELS) == 2
    assert COV.kernels_in({"kernels": 3, "family": "partition"}, TWO_KERNELS) == 3
    assert COV.kernels_in({"kernels": True}, TWO_KERNELS) == 2  # not a count
    assert COV.kernels_in({}, "@triton.jit\ndef a(:\n@triton.jit\ndef b(): pass") == 2  # no parse: the lines


def test_a_run_reports_the_kernels_of_its_latest_draft(tmp_path):
    with Registry(tmp_path / "coverage.db") as reg:
        spec_id = reg.record_spec("scale_relu", "scale_relu.py", "spec source")
        run = reg.create_run("r-20261202-aa11bb", "scale_relu", spec_id, "triton", "expert", "cpu/test", {})
        reg.record_candidate(spec_id, "@triton.jit\ndef k(): pass\n", "triton", "expert", run_id=run.id, round=0)
        reg.record_candidate(spec_id, TWO_KERNELS, "triton", "expert", meta={"config": {}}, run_id=run.id, round=1)
        summary = RunSummary(run.run_key, "scale_relu", "failed", None, "budget spent", None, 0, 2)
        result = COV.summarize_run(tmp_path / "scale_relu.py", "fusion", summary, 1.5, reg)
    assert (result.outcome, result.candidates, result.kernels) == ("failed", 2, 2)


def _result(set_name: str, op: str, verified: bool, kernels: int | None = None):
    outcome = "verified" if verified else "failed"
    return COV.SpecResult(f"{op}.py", op, set_name, outcome, True, verified, None, 2.0, 1, set=set_name,
                          kernels=kernels)


def test_each_set_is_judged_against_its_own_target():
    from benchmarks import coverage_report as report
    results = ([_result("fusion", f"f{i}", i < 7, kernels=i % 3 + 1) for i in range(10)]
               + [_result("conv", f"c{i}", i < 8) for i in range(9)] + [_result("level3", "l0", True, 4)])
    sets = report.by_set(results, bad={("c3", 7)})
    assert sets["fusion"]["pass"]["verified"] and sets["fusion"]["target_verified_pct"] == 70
    assert not sets["conv"]["pass"]["verified"]  # 8 of 9 is under 90 %
    assert (sets["conv"]["incorrect_promoted"], sets["fusion"]["incorrect_promoted"]) == (1, 0)
    assert (sets["fusion"]["kernels_median"], sets["fusion"]["kernels_max"]) == (2, 3)
    assert report.overall(results[:10], set())["target_verified_pct"] == 70
    assert report.overall(results, set())["target_verified_pct"] == 60


@pytest.mark.parametrize("folder", ["fusion", "level3"])
def test_every_spec_of_the_set_loads_and_runs_its_reference(folder):
    specs = sorted((SPECS / folder).glob("*.py"))
    for path in specs:
        spec = load_spec(path, max_elements=1 << 18, max_bytes=1 << 30)
        assert spec.meta["family"] == folder and "name" not in spec.meta, path.name
        module = spec.module()
        model = set_mode(module.Model(*module.get_init_inputs()), spec.mode)  # as the judge runs it
        with torch.no_grad():
            for inputs in input_lists(module, path):
                assert torch.isfinite(model(*inputs)).all(), path.name
