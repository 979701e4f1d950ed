"""The CUDA C++ backend end to end through the sandboxed worker: static checks, a real nvcc cubin
for sm_90 with ptxas statistics, numerics in opforge's CUDA emulator, the shared anti-cheat guards,
and the ladder's honest answer when a step cannot run here (exit 3)."""
from __future__ import annotations

import re

import json
import subprocess
import sys

import pytest

from conftest import KERNELS, ROOT, TINY
from opforge.harness import ladder
from opforge.harness.verify import VerifyOptions, verify

SOFTMAX = ROOT / "ops" / "softmax.py"
FAST = VerifyOptions(seed=7, trials=2, device="cpu", backend="cuda")


@pytest.fixture(scope="module")
def softmax_verdict():
    return verify(SOFTMAX, KERNELS / "cuda_softmax.py", FAST)


def line_of(path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_suite_softmax_in_cuda_verifies_emulated_with_ptxas_stats(softmax_verdict):
    from opforge.backends.cuda.emulator import TOOL, VERSION

    v = softmax_verdict
    assert v["correct"], v["reasons"]
    assert v["level"] == "emulated" and v["verified_on"] == f"cpu:{TOOL}-{VERSION}"
    assert v["steps"]["compile"]["status"] == "passed" and v["steps"]["compile"]["tool"] == "nvcc"
    assert v["steps"]["cpu_run"]["tool"] == TOOL and v["steps"]["device_run"]["status"] == "skipped"
    kernel = next(k for k in v["build"]["kernels"] if "softmax_rows" in k["kernel"])
    assert kernel["arch"] == "sm_90" and kernel["registers"] > 0 and kernel["barriers"] >= 1
    assert kernel["shared_bytes"] >= 128  # the 32-float scratch
    assert v["launches"] and all(name == "softmax_launch" for name in v["launches"])
    assert all(var["passed"] for var in v["variants"]) and len(v["variants"]) >= 5


def test_a_missing_syncthreads_fails_as_a_race():
    v = verify(TINY, KERNELS / "cuda_race.py", FAST)
    assert not v["correct"] and v["steps"]["cpu_run"]["status"] == "failed"
    assert "race" in v["reasons"][0] and "schedule" in v["reasons"][0], v["reasons"]
    assert ladder.exit_code(v) == 1


def test_a_half_warp_full_mask_shuffle_fails_as_a_deadlock():
    v = verify(TINY, KERNELS / "cuda_deadlock.py", FAST)
    assert not v["correct"] and "deadlock" in v["reasons"][0], v["reasons"]
    assert v["steps"]["cpu_run"]["status"] == "failed"


def test_a_syntax_error_fails_the_build_with_nvccs_message_and_the_candidate_line():
    path = KERNELS / "cuda_syntax_error.py"
    v = verify(SOFTMAX, path, FAST)
    assert (v["failed_step"], ladder.failed_check(v)) == ("compile", "build"), v["reasons"]
    assert v["steps"]["compile"]["status"] == "failed"
    reason = v["reasons"][0]
    assert "nvcc" in reason and "sum_of_row" in reason
    assert f"line {line_of(path, 'sum_of_row')}" in reason, reason
    assert v["level"] == "static" and ladder.exit_code(v) == 1


def test_an_out_of_bounds_write_is_caught():
    """Each block writes one element past its row: into the next row, which the next block writes too
    (a race between blocks, found first), and past the end of y for the last row."""
    v = verify(TINY, KERNELS / "cuda_oob.py", FAST)
    assert not v["correct"] and re.search(r"out-of-bounds: a write 4 bytes past the end of argument y|"
                                          r"race: kernel softmax_rows .* writes element \d+ of argument y, which block "
                                          r"\(\d+,0,0\) thread \(\d+,0,0\) wrote \(different blocks", v["reasons"][0]), v["reasons"]


def test_inline_asm_cannot_be_emulated_so_the_verdict_is_compiled_and_exit_3(tmp_path):
    v = verify(TINY, KERNELS / "cuda_asm.py", FAST)
    assert not v["correct"] and v["level"] == "compiled", (v["reasons"], v["steps"])
    assert v["steps"]["cpu_run"]["status"] == "unsupported" and "asm" in v["steps"]["cpu_run"]["reason"]
    assert ladder.exit_code(v) == 3
    cli = subprocess.run([sys.executable, "-m", "opforge", "--db", str(tmp_path / "r.db"), "verify", str(TINY),
                          str(KERNELS / "cuda_asm.py"), "--backend", "cuda", "--device", "cpu", "--trials", "1",
                          "--json"], capture_output=True, text=True, timeout=600)
    assert cli.returncode == 3, cli.stderr[-2000:]
    assert json.loads(cli.stdout)["level"] == "compiled"


def test_torch_compute_in_forward_is_rejected():
    v = verify(TINY, KERNELS / "cuda_torch_compute.py", FAST)
    assert not v["correct"] and any(r.startswith("torch-compute") for r in v["reasons"]), v["reasons"]


@pytest.mark.parametrize("spelling", ["imported", "in_full"])
def test_a_load_inline_candidate_on_a_cpu_build_of_torch_is_static_and_exit_3(spelling, tmp_path):
    """`torch.utils.cpp_extension.load_inline(...)` spelt in full gets the same exit 3 as the import."""
    import torch

    if torch.version.cuda is not None:
        pytest.skip("this PyTorch is a CUDA build: load_inline can build here")
    path = KERNELS / "cuda_load_inline.py"
    if spelling == "in_full":
        path = tmp_path / "cuda_load_inline_in_full.py"
        path.write_text((KERNELS / "cuda_load_inline.py").read_text().replace(
            "from torch.utils.cpp_extension import load_inline\n", "import torch.utils.cpp_extension\n").replace(
            "= load_inline(", "= torch.utils.cpp_extension.load_inline("))
        assert "torch.utils.cpp_extension.load_inline(" in path.read_text()
    v = verify(TINY, path, FAST)
    assert not v["correct"] and v["level"] == "static", (v["reasons"], v["steps"])
    assert v["steps"]["compile"]["status"] == "skipped" and "CUDA build of PyTorch" in v["steps"]["compile"]["reason"]
    assert ladder.exit_code(v) == 3


def test_a_no_op_replay_of_the_launcher_is_caught(tmp_path):
    """The launch helper reports to the shared LaunchLog: a forward whose output does not depend on
    its launches (a cached result returned) fails like a Triton one."""
    src = (KERNELS / "cuda_softmax.py").read_text().replace(
        "        _lib.softmax_launch(x, y, x.numel() // cols, cols)\n        return y\n",
        "        _lib.softmax_launch(x, y, x.numel() // cols, cols)\n"
        "        if not hasattr(self, 'first'):\n            self.first = y\n        return self.first\n")
    path = tmp_path / "cuda_cached.py"
    path.write_text(src)
    v = verify(TINY, path, FAST)
    assert not v["correct"] and "cached-output" in " ".join(v["reasons"]), v["reasons"]
    assert any(r.startswith("kernel-independent") for r in v["reasons"]), v["reasons"]


def test_the_emulated_kernel_runs_inside_the_docker_sandbox():
    """The emulator builds and loads the candidate's library inside the container (its scratch must
    allow that), like every other candidate code."""
    from conftest import require_runtime
    from opforge.sandbox import docker_runtime

    require_runtime("docker", docker_runtime.unavailable())
    v = verify(TINY, KERNELS / "cuda_softmax.py", VerifyOptions(seed=3, trials=1, device="cpu", backend="cuda",
                                                                 sandbox="docker"))
    assert v["correct"] and v["sandbox"] == "docker" and v["level"] == "emulated", v["reasons"]
    assert v["jobs"]["run"]["runtime"] == "docker"
