"""opforge export on a small registry: what the library contains, reproducibility, the promotion
policy's effect, refusals (bad name, foreign directory, nothing promoted), and the committed
kernels_generated/ still matching the suite's sources."""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import KERNELS, ROOT, TINY, write
from opforge.exporter import ExportError, export_library
from opforge.exporter.suite import suite_pairs
from opforge.harness.ladder import step
from opforge.harness.verify import VerifyOptions, prepare, verify_source
from opforge.registry import Registry, RegistryError
from opforge.registry.recording import record_verification

FASTDOT = ROOT / "opforge" / "backends" / "triton" / "fastdot.py"

OPFORGE = str(Path(sys.executable).parent / "opforge")


@pytest.fixture
def reg(tmp_path):
    with Registry(tmp_path / "reg.db") as registry:
        yield registry


# One worker runs the module, so the same kernel verified for several tests' registries is verified once.
pytestmark = pytest.mark.xdist_group("export_small")
OPTIONS = VerifyOptions(device="cpu", trials=2, seed=5)


@functools.cache
def _verdict(spec: Path, kernel_source: str) -> tuple:
    op_spec, hardware = prepare(spec, OPTIONS)
    return op_spec, hardware, verify_source(op_spec, hardware, kernel_source, OPTIONS)


def verified(reg: Registry, spec: Path, kernel_source: str) -> int:
    op_spec, hardware, verdict = _verdict(spec, kernel_source)
    assert verdict["correct"], verdict["reasons"]
    return record_verification(reg, op_spec, kernel_source, copy.deepcopy(verdict), hardware, drafter="user")[0]


def run_python(code: str, *, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    # Other tests in the same worker set TRITON_INTERPRET in os.environ at import: the child sees only what this test asks for.
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNELS_GENERATED") and k != "TRITON_INTERPRET"} | (env or {})
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_export_renders_a_library_that_runs_its_kernel_and_is_byte_reproducible(reg, tmp_path):
    cand = verified(reg, TINY, (KERNELS / "good.py").read_text())
    reg.promote(cand)
    result = export_library(reg, tmp_path / "a", name="tiny_lib")
    assert [op.name for op in result.ops] == ["tiny_softmax"] and result.ops[0].archs == ("cpu",)
    pkg = tmp_path / "a" / "tiny_lib"
    module = (pkg / "ops" / "tiny_softmax.py").read_text()
    assert (KERNELS / "good.py").read_text().strip() in module  # the verified source, verbatim
    meta = json.loads((pkg / "metadata.json").read_text())["ops"]["tiny_softmax"]
    assert meta["versions"][0]["candidate_id"] == cand and meta["spec_sha256"] == hashlib.sha256(TINY.read_bytes()).hexdigest()
    assert 'vllm.general_plugins' in (tmp_path / "a" / "pyproject.toml").read_text()

    export_library(reg, tmp_path / "b", name="tiny_lib")
    files_a = {p.relative_to(tmp_path / "a"): p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()}
    files_b = {p.relative_to(tmp_path / "b"): p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file()}
    assert files_a == files_b

    code = ("import torch, tiny_lib; x = torch.randn(5, 37); "
            "y = tiny_lib.tiny_softmax(x); z = torch.ops.tiny_lib.tiny_softmax(x); "
            "assert torch.allclose(y, torch.softmax(x, -1), atol=1e-5) and torch.equal(y, z); "
            "print(tiny_lib.fallbacks)")
    ran = run_python(code, cwd=tmp_path / "a", env={"TRITON_INTERPRET": "1", "TINY_LIB_NO_FALLBACK": "1"})
    assert ran.returncode == 0 and ran.stdout.strip() == "{}", ran.stderr[-2000:]
    # Without the interpreter a CPU cannot run Triton: the call falls back, says why, and counts it.
    ran = run_python(code, cwd=tmp_path / "a")
    assert ran.returncode == 0 and "{'tiny_softmax': 2}" in ran.stdout, ran.stderr[-2000:]
    assert "cpu without TRITON_INTERPRET=1" in ran.stderr and ran.stderr.count("using the PyTorch reference") == 1
    # Kernels were verified under the harness's fix of the interpreter's bf16 tl.dot; the package ships
    # it and installs it under the interpreter, or a bf16 matmul computes garbage where it runs on a CPU.
    assert (pkg / "_interpreter_dot.py").read_text().endswith(FASTDOT.read_text())
    assert (pkg / "_interpreter_lang.py").read_text().endswith(FASTDOT.with_name("fastlang.py").read_text())
    probe = ("import tiny_lib; from triton.runtime import interpreter as i; "
             "print(getattr(i.InterpreterBuilder.create_dot, 'opforge_blas', False), "
             "getattr(i._patch_lang, 'opforge_once', False))")
    assert run_python(probe, cwd=tmp_path / "a", env={"TRITON_INTERPRET": "1"}).stdout.strip() == "True True"


def test_re_export_removes_what_is_no_longer_exported_and_refuses_foreign_directories(reg, tmp_path):
    first = verified(reg, TINY, (KERNELS / "good.py").read_text())
    silu_spec = ROOT / "tests" / "data" / "specs" / "tiny_silu.py"
    silu = verified(reg, silu_spec, (ROOT / "opforge" / "backends" / "triton" / "knowledge" / "silu.py").read_text())
    reg.promote(first)
    reg.promote(silu)
    out = tmp_path / "lib"
    export_library(reg, out)
    assert (out / "kernels_generated" / "ops" / "tiny_silu.py").is_file()
    with reg._engine.begin() as conn:  # retire the silu version (no public API deactivates one)
        conn.exec_driver_sql("UPDATE versions SET active = 0 WHERE candidate_id = ?", (silu,))
    export_library(reg, out)
    assert not (out / "kernels_generated" / "ops" / "tiny_silu.py").exists()
    assert not (out / "kernels_generated" / "configs" / "tiny_silu.json").exists()

    foreign = write(tmp_path / "mine" / "notes.txt", "keep me")
    with pytest.raises(ExportError, match="not written by opforge export"):
        export_library(reg, foreign.parent)
    assert foreign.read_text() == "keep me"
    with pytest.raises(ExportError, match="lower_snake_case"):
        export_library(reg, tmp_path / "x", name="Bad-Name")


def test_cli_export_errors_are_one_line(tmp_path):
    db = tmp_path / "empty.db"
    result = subprocess.run([OPFORGE, "--db", str(db), "export", "--out", str(tmp_path / "o")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.startswith("opforge: error: nothing to export")
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "o").exists()
    result = subprocess.run([OPFORGE, "--db", str(db), "promote"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "give a candidate ID, or --auto" in result.stderr


def timed(speedup: float) -> dict:
    return {"correct": True, "failed_step": None, "reasons": [],
            "timings": {"kernel_ms": 1.0 / speedup, "speedup_eager": speedup}}


def test_policy_refuses_a_timed_slowdown_and_auto_picks_the_fastest(reg):
    spec = reg.record_spec("op", "ops/op.py", "spec")
    slow, fast, faster = (reg.record_candidate(spec, src, "triton", "user") for src in ("s", "f", "ff"))
    for cand, speedup in ((slow, 0.8), (fast, 1.5), (faster, 2.5)):
        reg.record_evaluation(cand, "cuda/H200/sm_90", {}, timed(speedup))
    with pytest.raises(RegistryError, match=r"0.80x PyTorch eager.*--force"):
        reg.promote(slow)
    assert reg.promote(slow, force=True).candidate_id == slow
    assert [v.candidate_id for v in reg.promote_auto()] == [faster]
    assert reg.promote_auto() == []  # already active: nothing to do


def test_committed_library_matches_the_suite_sources():
    """Cheap staleness check (the full byte-for-byte one is in test_export_suite.py)."""
    meta = json.loads((ROOT / "kernels_generated" / "kernels_generated" / "metadata.json").read_text())["ops"]
    pairs = {spec.stem: (spec, kernel) for spec, kernel in suite_pairs()}
    assert sorted(meta) == sorted(pairs), "run `make kernels`: the suite's ops changed"
    for op, (spec, kernel) in pairs.items():
        assert meta[op]["spec_sha256"] == hashlib.sha256(spec.read_bytes()).hexdigest(), f"{op}: run `make kernels`"
        assert meta[op]["versions"][0]["candidate_sha256"] == hashlib.sha256(kernel.read_bytes()).hexdigest(), \
            f"{op}: run `make kernels`"


def test_a_kernel_module_that_ignores_its_constructor_runs_only_as_verified(reg, tmp_path):
    spec = ROOT / "tests" / "data" / "export" / "tiny_rms_norm.py"  # not in specs/: the batch tests run that folder
    reg.promote(verified(reg, spec, (KERNELS / "rms_norm_fixed_size.py").read_text()))
    export_library(reg, tmp_path / "lib")
    code = ("import torch, kernels_generated as k\n"
            "from kernels_generated.references import tiny_rms_norm as ref\n"
            "for hidden in (48, 64):\n"
            "    torch.manual_seed(0); want = ref.Model(hidden)\n"
            "    x = torch.randn(3, hidden)\n"
            "    got = k.TinyRmsNorm(hidden)(x)\n"  # the reference's weights, as verification copied them
            "    assert torch.allclose(got, want(x), atol=1e-5), hidden\n"
            "    print(hidden, dict(k.fallbacks))\n")
    ran = run_python(code, cwd=tmp_path / "lib", env={"TRITON_INTERPRET": "1"})
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.splitlines() == ["48 {}", "64 {'tiny_rms_norm': 1}"]
    assert "constructor argument 0 is 64, verified with 48 (a size, but the kernel module's weights do not" in ran.stderr
    # Beyond the weight's width the reference itself refuses: so does the library (no out-of-bounds read).
    code = ("import torch, kernels_generated as k\n"
            "try:\n    k.TinyRmsNorm(48)(torch.randn(2, 60))\nexcept RuntimeError as exc:\n    print('refused')\n"
            "print(dict(k.fallbacks))\n")
    ran = run_python(code, cwd=tmp_path / "lib", env={"TRITON_INTERPRET": "1"})
    assert ran.stdout.splitlines() == ["refused", "{'tiny_rms_norm': 1}"], ran.stderr[-2000:]
    assert "the reference rejects these shapes" in ran.stderr


def test_versions_no_longer_fit_to_ship_are_left_out_and_an_edited_marker_cannot_reach_outside(reg, tmp_path):
    good = verified(reg, TINY, (KERNELS / "good.py").read_text())
    silu = verified(reg, ROOT / "tests" / "data" / "specs" / "tiny_silu.py",
                    (ROOT / "opforge" / "backends" / "triton" / "knowledge" / "silu.py").read_text())
    reg.promote(good)
    reg.promote(silu)
    hardware = reg.latest_evaluation(silu).hardware
    reg.record_evaluation(silu, hardware, {}, {"correct": False, "failed_step": "cpu_run", "reasons": ["max abs err 1 > atol"],
                                              "steps": {"cpu_run": step("failed", reason="max abs err 1 > atol")}})
    result = export_library(reg, tmp_path / "lib")
    assert [op.name for op in result.ops] == ["tiny_softmax"]
    assert any("tiny_silu: left out v1" in note and "re-verified incorrect" in note for note in result.notes)

    outside = write(tmp_path / "victim" / "keep.txt", "mine")
    (tmp_path / "lib" / ".opforge-export").write_text('{"files": ["../victim/keep.txt"]}')
    with pytest.raises(ExportError, match="outside"):
        export_library(reg, tmp_path / "lib")
    (tmp_path / "lib" / ".opforge-export").write_text("not json")
    with pytest.raises(ExportError, match="damaged"):
        export_library(reg, tmp_path / "lib")
    assert outside.read_text() == "mine"


def test_names_that_would_take_over_another_package_or_the_library_are_refused(reg, tmp_path):
    reg.promote(verified(reg, TINY, (KERNELS / "good.py").read_text()))
    for bad in ("torch", "vllm"):
        with pytest.raises(ExportError, match="another package's name"):
            export_library(reg, tmp_path / bad, name=bad)
    assert not (tmp_path / "torch").exists()


def test_versions_of_a_revised_spec_are_stale_for_export_and_auto_promotion(reg):
    old = reg.record_spec("op", "ops/op.py", "spec v1")
    cand = reg.record_candidate(old, "k1", "triton", "user")
    reg.record_evaluation(cand, "cuda/H200/sm_90", {}, timed(2.0))
    reg.promote(cand)
    reg.record_spec("op", "ops/op.py", "spec v2")  # the op's spec changed since
    (pk,) = reg.promoted_kernels()
    assert pk.problem == "its spec has been revised since it was verified"
    assert reg.promote_auto() == []  # nothing of the current spec is verified
