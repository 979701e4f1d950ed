"""The verification pipeline's steps and failure modes, end to end through the sandboxed worker."""
from __future__ import annotations

import json

from conftest import KERNELS, ROOT, TINY, write
from opforge.harness import ladder
from opforge.harness.verify import VerifyOptions, verify

FAST = VerifyOptions(seed=7, trials=2, device="cpu")


def test_verdict_contract_fields():
    v = verify(TINY, KERNELS / "good.py", FAST)
    for key in ("correct", "steps", "failed_step", "level", "reasons", "variants", "sizes", "device", "timings", "build", "anticheat",
                "seed", "hardware", "spec_sha256", "candidate_sha256"):
        assert key in v, key
    assert (v["failed_step"], v["level"]) == (None, "emulated") and v["device"] == "cpu" and v["seed"] == 7
    assert v["timings"] is None and "no GPU" in v["timings_note"]
    var = v["variants"][1]
    assert var["shapes"] == [[3, 17]] and var["max_abs_err"] < 1e-6 and var["atol"] == 1e-5  # fp32, the reference's error measured
    assert 0 <= var["reference_error"] < 1e-6
    json.dumps(v)  # the verdict is plain JSON


def test_code_only_the_interpreter_accepts_fails_the_build():
    v = verify(TINY, KERNELS / "interpreter_only.py", FAST)
    assert (v["failed_step"], ladder.failed_check(v)) == ("compile", "build"), v["reasons"]
    assert v["reasons"][0].startswith("build-error: _softmax_kernel does not compile for sm_90")
    assert "power of 2" in v["reasons"][0] or "power of two" in v["reasons"][0]


def test_ragged_variant_failure_names_the_variant_and_numbers():
    v = verify(TINY, KERNELS / "wrong_no_mask.py", FAST)
    assert (v["failed_step"], ladder.failed_check(v)) == ("cpu_run", "compare")
    assert v["reasons"][0].startswith("mismatch: variant 0: output 0: max abs err")
    assert "atol" in v["reasons"][0] and not v["variants"][0]["passed"]


def test_runtime_error_is_a_verdict_with_the_candidate_line():
    v = verify(TINY, KERNELS / "raises.py", FAST)
    assert (v["failed_step"], ladder.failed_check(v)) == ("cpu_run", "run")
    assert v["reasons"][0].startswith("runtime-error: variant 0: forward raised TypeError")
    assert "(candidate line" in v["reasons"][0]


def test_hanging_candidate_is_killed_at_the_time_limit():
    options = VerifyOptions(seed=7, trials=2, device="cpu", timeout_s=10)  # per phase: the build needs 1-3 s
    v = verify(TINY, KERNELS / "hang.py", options)
    assert (v["failed_step"], ladder.failed_check(v)) == ("cpu_run", "run") and v["reasons"][0].startswith("timeout:")
    # stopped by its own limit, not sooner (how soon after is the machine's speed: no bound here)
    assert max(job["wall_s"] for job in v["jobs"].values()) >= options.timeout_s


def test_import_error_in_candidate_is_reported_at_load(tmp_path):
    source = (KERNELS / "good.py").read_text() + "\nraise ValueError('broken at import')\n"
    v = verify(TINY, write(tmp_path / "k.py", source), FAST)
    assert (v["failed_step"], ladder.failed_check(v)) == ("compile", "build")
    assert "load-error: importing the candidate raised ValueError: broken at import" in v["reasons"][0]


def test_cpu_run_records_shrunk_sizes():
    v = verify(ROOT / "ops" / "silu.py", ROOT / "opforge" / "backends" / "triton" / "knowledge" / "silu.py", FAST)
    assert v["correct"], v["reasons"]
    assert v["sizes"]["declared"] == {"batch_size": 4096, "dim": 4096}
    assert v["sizes"]["used"]["batch_size"] < 4096
    assert v["variants"][0]["shapes"] == [[v["sizes"]["used"]["batch_size"], v["sizes"]["used"]["dim"]]]


def test_mutating_op_declared_in_spec_is_compared_after_the_call(tmp_path):
    spec = write(tmp_path / "axpy_.py", '''import torch
OPFORGE = dict(name="axpy_inplace", mutates=["y"])
n = 1000
class Model(torch.nn.Module):
    def forward(self, x, y):
        y.add_(2.0 * x)
        return y.sum()
def get_inputs():
    return [torch.randn(n), torch.randn(n)]
''')
    kernel = write(tmp_path / "k.py", '''import torch
import triton
import triton.language as tl

@triton.jit
def _axpy_sum(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        m = start + offs < n
        y = tl.load(y_ptr + start + offs, mask=m) + 2.0 * tl.load(x_ptr + start + offs, mask=m)
        tl.store(y_ptr + start + offs, y, mask=m)
        acc += tl.where(m, y, 0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))

class ModelNew(torch.nn.Module):
    def forward(self, x, y):
        out = torch.empty((), device=x.device)
        _axpy_sum[(1,)](x, y, out, x.numel(), BLOCK=256)
        return out
''')
    v = verify(spec, kernel, FAST)
    assert v["correct"], v["reasons"]
    # the same kernel against a spec that does not declare the mutation is rejected
    undeclared = write(tmp_path / "axpy2.py", spec.read_text().replace(', mutates=["y"]', ""))
    v = verify(undeclared, kernel, FAST)
    assert any(r.startswith("input-mutation: input 1") for r in v["reasons"]), v["reasons"]
