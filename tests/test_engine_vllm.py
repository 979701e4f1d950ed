"""The engine check (opforge/engines/vllm_check.py): a real vLLM engine, with the exported library's
plugin and without it, on a tiny Llama with seeded weights. The committed kernels_generated/ must pass;
a copy whose RMSNorm kernel has its epsilon altered (the tokens stay the same) must fail, naming why.
The judge's rules are tested straight on made-up runs (cheap); the engine runs once per mode (the
baseline and the model are shared). Without the vLLM env (scripts/vllm_env.sh) the engine tests skip
with the reason, or fail under OPFORGE_CI."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from opforge.engines import vllm_check
from opforge.engines.vllm_check import CheckError, Library, judge

LIB = Library(Path("lib"), "pkg", {"norm": ["vllm:rms_norm"], "rope": ["vllm:rotary_embedding:neox",
                                                                       "vllm:rotary_embedding:gptj"]}, 1e-6)
LAYERS = [{"class": "RMSNorm", "replaces": "RMSNorm", "attrs": {}, "count": 5},
          {"class": "RotaryEmbedding", "replaces": "RotaryEmbedding", "attrs": {"is_neox_style": True}, "count": 2}]


def run(loaded=True, tokens=((5, 6, 7), (8, 9, 10)), shift=0.0, calls=None, layers=LAYERS):
    logprobs = [[{str(t): -1.0 - shift, "3": -2.5} for t in seq] for seq in tokens]
    stats = {"kernel_calls": calls if calls is not None else {"norm": 40, "rope": 16}, "fallbacks": {}}
    return {"package_loaded": loaded, "tokens": [list(t) for t in tokens], "logprobs": logprobs, "seconds": 1.0,
            "new_tokens": 6, "replaced": {"RMSNorm": "pkg._vllm.RMSNorm"}, "model_layers": layers if loaded else [],
            "stats": stats if loaded else None, "vllm": "0", "torch": "0"}


def test_matching_runs_whose_replaced_ops_ran_pass():
    res = judge(run(), run(loaded=False), LIB)
    assert res.passed, res.problems
    assert [(r.op, r.layer, r.calls, r.expected) for r in res.rows] == [
        ("norm", "RMSNorm", 40, True), ("rope", "RotaryEmbedding", 16, True)]
    assert "engine check: PASS" in vllm_check.table(res)


def test_a_different_greedy_token_fails():
    res = judge(run(tokens=((5, 6, 7), (8, 9, 11))), run(loaded=False), LIB)
    assert not res.passed and "greedy tokens differ: 1 of 6 positions" in res.problems[0]


def test_logprobs_beyond_the_tolerance_fail_and_within_it_pass():
    assert judge(run(shift=5e-4), run(loaded=False), LIB).passed
    res = judge(run(shift=3e-3), run(loaded=False), LIB)
    assert res.problems == ["logprobs differ by up to 0.003 (tolerance 0.001)"]


def test_a_replaced_op_that_never_ran_its_kernel_fails():
    res = judge(run(calls={"norm": 40}), run(loaded=False), LIB)
    assert res.problems == ["rope replaces vLLM's RotaryEmbedding in this model but ran its kernel 0 times "
                            "(0 fallbacks)"]


def test_an_op_whose_layer_this_model_lacks_is_not_required():
    gptj = [dict(LAYERS[1], attrs={"is_neox_style": False})]
    res = judge(run(calls={"rope": 3}, layers=gptj), run(loaded=False), LIB)
    assert res.passed and [r.expected for r in res.rows] == [False, True]


def test_a_replaced_subclass_of_a_layer_counts_as_that_layer():
    llama3 = [dict(LAYERS[1], replaces="Llama3RotaryEmbedding", bases=["Llama3RotaryEmbedding", "RotaryEmbedding",
                                                                       "CustomOp", "Module", "object"])]
    res = judge(run(calls={"rope": 0}, layers=llama3), run(loaded=False), LIB)
    assert res.problems == ["rope replaces vLLM's Llama3RotaryEmbedding in this model but ran its kernel 0 times "
                            "(0 fallbacks)"]


def test_a_plugin_that_replaced_nothing_fails_instead_of_passing_vacuously():
    res = judge(run(layers=[]), run(loaded=False), LIB)
    assert res.problems == ["the plugin replaced no layer of this model with an exported op (layers registered: "
                            "RMSNorm)"]
    bare = judge(run(layers=[]), run(loaded=False), Library(Path("lib"), "pkg", {}, 1e-6))
    assert "the library declares no vLLM op" in bare.problems[-1]


def test_a_baseline_that_loaded_the_plugin_fails():
    assert "the baseline is not vLLM's own" in judge(run(), run(), LIB).problems[0]


def test_user_mistakes_are_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPFORGE_VLLM_ENV", str(tmp_path / "none"))
    assert vllm_check.main([]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"engine check: no vLLM environment at {tmp_path / 'none'}: build it with `bash scripts/vllm_env.sh` "
        "(2-3 min, 3.5 GB) or pass --env DIR"]
    with pytest.raises(CheckError, match="not an exported library: no pyproject.toml"):
        vllm_check.read_library(tmp_path)


# ---- the real engine ----

def vllm_env() -> Path:
    try:
        return vllm_check.find_env()
    except CheckError as e:
        if os.environ.get("OPFORGE_CI"):
            pytest.fail(f"the vLLM env is required here (.ci/run builds it): {e}")
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    vllm_env()
    work = tmp_path_factory.mktemp("engine")
    return work, vllm_check.run_check(ROOT / "kernels_generated", work=work)


def break_rms_norm(library: Path, dest: Path) -> str:
    """A copy of the library whose RMSNorm kernel (the op implementing vllm:rms_norm, run once per
    forward, by layer 0's input norm) adds 1e-3 to its epsilon; returns the op's name. Measured: every
    greedy token stays the same, the logprobs move by 8e-3: only the logprob comparison catches it."""
    shutil.copytree(library, dest, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    lib = vllm_check.read_library(dest)
    op = next(op for op, keys in lib.implements.items() if "vllm:rms_norm" in keys)
    path = dest / lib.package / "ops" / f"{op}.py"
    kernel, entry = path.read_text(encoding="utf-8").split("# ---- entry points", 1)
    # The epsilon as a name (`+ eps`, `+ self.eps`) or, in the expert's kernels, the verified value inlined
    literal = "|".join(re.escape(f) for f in {repr(lib.eps), f"{lib.eps:g}"})  # 1e-06, 1e-6
    broken, count = re.subn(rf"\+\s*((?:self\.)?(?:eps|epsilon)\b|(?:{literal})(?![0-9]))", r"+ (\1 + 1e-3)", kernel)
    assert count, f"no `+ eps` in {path}'s kernel to break"
    path.write_text(broken + "# ---- entry points" + entry, encoding="utf-8")
    return op


@pytest.mark.xdist_group("engine_vllm")
def test_vllm_layers_run_the_committed_kernels_and_change_nothing(committed):
    _, res = committed
    assert res.passed, vllm_check.table(res)
    ran = {r.op: r.calls for r in res.rows if r.expected}
    assert ran and all(ran.values()), ran


@pytest.mark.xdist_group("engine_vllm")
def test_a_broken_rms_norm_kernel_fails_the_engine_check(committed, tmp_path):
    work, good = committed
    op = break_rms_norm(ROOT / "kernels_generated", tmp_path / "lib")
    res = vllm_check.run_check(tmp_path / "lib", work=tmp_path, plain=good.plain, model=work / "model")
    assert not res.passed
    assert any(p.startswith("logprobs differ by up to") for p in res.problems), res.problems
    assert {r.op: r.calls for r in res.rows}[op], "the broken kernel must have run"
