"""The issue's proof that an engine can use what opforge exports: the offline expert verifies the
decoder layer's serving ops (`opforge batch`), `opforge export` writes the library, and
examples/decoder_layer.py runs a Llama-style layer for several decode steps on it, under Triton's
interpreter with the PyTorch fallback forbidden, against the same layer in plain PyTorch."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
import torch

from conftest import ROOT
from test_cli import OPFORGE

# The batch verifies seven serving ops with the expert (about 5 minutes on an idle 2-core machine).
pytestmark = [pytest.mark.xdist_group("decoder_layer"), pytest.mark.timeout(2400)]
EXAMPLE = ROOT / "examples" / "decoder_layer.py"


def _example():
    spec = importlib.util.spec_from_file_location("decoder_layer", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


DECODER = _example()


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """The decoder layer's ops verified by the offline expert into a fresh registry, then exported."""
    tmp = tmp_path_factory.mktemp("decoder")
    db, out = tmp / "opforge.db", tmp / "lib"
    specs = [str(ROOT / "ops" / "serving" / f"{op}.py") for op in DECODER.OPS]
    batch = subprocess.run([OPFORGE, "--db", str(db), "batch", *specs, "--budget", "1", "--trials", "1",
                            "--report", str(tmp / "report.json")], capture_output=True, text=True, timeout=2000)
    report = json.loads((tmp / "report.json").read_text()) if (tmp / "report.json").exists() else None
    assert batch.returncode == 0, (batch.stdout[-3000:], batch.stderr[-3000:], report)
    export = subprocess.run([OPFORGE, "--db", str(db), "export", "--out", str(out)], capture_output=True,
                            text=True, timeout=600)
    assert export.returncode == 0, export.stdout + export.stderr
    return out


def test_the_layer_runs_on_generated_kernels_only_and_matches_pytorch(library):
    env = {**os.environ, "KERNELS_GENERATED_NO_FALLBACK": "1", "TRITON_INTERPRET": "1"}
    result = subprocess.run([sys.executable, str(EXAMPLE), "--library", str(library), "--device", "cpu"],
                            capture_output=True, text=True, timeout=900, env=env, cwd=library)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == DECODER.Config.steps
    worst = max(float(x) for row in rows for x in row[1:])
    assert 0 < worst <= DECODER.TOLERANCE  # 0 would mean the library's ops were PyTorch's own
    assert "agree" in result.stdout and "Traceback" not in result.stderr


def test_the_layers_committed_drafter_examples_are_the_kernels_this_batch_verified(library):
    """opforge/backends/triton/knowledge/serving/<op>.py (make serving-examples) is, below its header, the
    kernel the expert drafts and the batch above verified for that op: the committed examples of
    the layer's ops pass verification in every run of the suite, at no extra cost."""
    from opforge.knowledge.corpus import verified_example
    from opforge.registry import Registry

    with Registry(library.parent / "opforge.db") as reg:
        promoted = {v.op: reg.get_candidate(v.candidate_id).source for v in reg.active_versions()}
    assert set(promoted) == set(DECODER.OPS)
    for op, source in promoted.items():
        example = ROOT / "opforge" / "backends" / "triton" / "knowledge" / "serving" / f"{op}.py"
        hashes, kernel = verified_example(example.read_text())
        assert "kernel" in hashes and kernel.rstrip("\n") == source.rstrip("\n"), f"{op}: rerun make serving-examples"


def test_every_op_of_the_layer_is_a_torch_library_op(library):
    """The layer's compute goes through torch.ops.kernels_generated.*: each op is registered there,
    and a missing one is exit 2 with one line, not a traceback."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import torch, kernels_generated; "
            f"print(all(hasattr(torch.ops.kernels_generated, op) for op in {DECODER.OPS!r}))")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", code, str(library)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.stdout.strip() == "True", done.stdout + done.stderr
    missing = subprocess.run([sys.executable, str(EXAMPLE), "--library", str(ROOT / "kernels_generated")],
                             capture_output=True, text=True, env=env, timeout=300)
    # the committed library holds the layer's norms, activations and rotary, not its GEMM, cache write or attention
    assert missing.returncode == 2 and "no linear_bf16" in missing.stderr and "Traceback" not in missing.stderr


def test_the_comparison_catches_a_wrong_op(monkeypatch):
    """The check could fail: the layer on PyTorch ops with one op off by a little disagrees."""
    class Wrong(DECODER.TorchOps):
        def silu_and_mul(self, x):
            return (super().silu_and_mul(x).float() * 1.1).to(x.dtype)

    monkeypatch.setattr(DECODER, "LibraryOps", lambda library: Wrong(torch.device("cpu")))
    diffs = DECODER.run("unused", DECODER.Config(steps=2))
    assert max(d.hidden for d in diffs) > DECODER.TOLERANCE
    assert all(d.cache == 0 for d in diffs[:1])  # the first step's K/V come before the MLP


def test_the_step_benchmark_times_the_library_against_eager(library, tmp_path):
    """benchmarks/decoder_layer_step.py runs the layer on the library and on the specs' references
    and reports each variant's time with its distance from eager (here the interpreter's time)."""
    env = {**os.environ, "KERNELS_GENERATED_NO_FALLBACK": "1", "TRITON_INTERPRET": "1"}
    report = tmp_path / "step.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "decoder_layer_step.py"), "--library", str(library),
                           "--device", "cpu", "--sequences", "2", "--context", "20", "--no-compile", "--json",
                           str(report)], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["variant"]: r for r in json.loads(report.read_text())["rows"]}
    assert set(rows) == {"pytorch eager", "kernels_generated kernels"}
    lib = rows["kernels_generated kernels"]
    assert lib["agrees"] and 0 < lib["error_vs_eager"] <= DECODER.TOLERANCE and lib["ms"] > 0
    assert "interpreter" in done.stdout and "DISAGREES" not in done.stdout
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "decoder_layer_step.py"), "--library",
                          str(tmp_path / "nowhere")], capture_output=True, text=True, timeout=120, env=env)
    assert bad.returncode == 2 and "no library folder" in bad.stderr and "Traceback" not in bad.stderr
