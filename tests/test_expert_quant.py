"""The expert on quantisation (issue #19): row-wise and whole-tensor absmax, scale, round, saturate, cast to
int8 / float8_e4m3fn / float8_e5m2, with the scales returned too. The int8 specs verify through the real
harness; the fp8 ones are run under the interpreter and compared bit for bit, since the harness's output
guards have no float8 sentinel yet (guards.fill_sentinel raises for float8 outputs)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from conftest import ROOT
from opforge.codegen import generate
from opforge.backends.triton.emit.exprs import FP8_HELPERS
from opforge.codegen.families.rowwise.plan import analyse
from opforge.codegen.lower import lower
from opforge.harness.verify import VerifyOptions, prepare, verify

OPTIONS = VerifyOptions(device="cpu", trials=1, seed=1, sandbox="none")
SERVING = ROOT / "ops" / "serving"
VARIANTS = ROOT / "benchmarks" / "expert_specs" / "serving"
PYTHON = sys.executable


def interpreted(script: str) -> dict:
    """Run `script` in a process of its own under Triton's interpreter (TRITON_INTERPRET is read at
    import); it prints one JSON line last."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([PYTHON, "-c", script], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def candidate(tmp_path, spec) -> tuple:
    sized, _ = prepare(spec, OPTIONS)
    kernel = generate(spec.read_text(), spec.stem, sized.sizes_used)
    path = tmp_path / f"{spec.stem}_candidate.py"
    path.write_text(kernel.render(kernel.space[0]))
    return path, kernel


# --- exact fp8 rounding ---------------------------------------------------------------------------

FP8_CHECK = '''
import importlib.util, json, sys, torch, triton, triton.language as tl
from opforge.backends.triton.emit.exprs import FP8_HELPERS
path = {path!r}
kernels = "\\n\\n".join(
    f"@triton.jit\\ndef k_{{name}}(x_ptr, o_ptr, n, BLOCK: tl.constexpr):\\n"
    f"    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\\n"
    f"    m = offs < n\\n"
    f"    tl.store(o_ptr + offs, {{name}}(tl.load(x_ptr + offs, mask=m, other=0.0)), mask=m)\\n"
    for name in FP8_HELPERS)
open(path, "w").write("import triton\\nimport triton.language as tl\\n\\n" + "\\n\\n".join(FP8_HELPERS.values()) + "\\n\\n" + kernels)
spec = importlib.util.spec_from_file_location("fp8_kernels", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
every16 = torch.arange(65536, dtype=torch.int32).to(torch.int16)
base = [every16.view(torch.float16).float(), every16.view(torch.bfloat16).float(),
        torch.randn(100000, generator=torch.Generator().manual_seed(0)) * torch.logspace(-12, 6, 100000),
        torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), -float("nan"), 50.0, 464.0, 61440.0])]
result = {{}}
for dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
    grid = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dtype).float()
    grid = grid[torch.isfinite(grid)].unique()
    ties = ((grid[1:].double() + grid[:-1].double()) / 2).float()  # exactly halfway: where a cast goes wrong
    x = torch.cat(base + [ties, -ties, grid])
    out = torch.empty(x.numel(), dtype=dtype)
    name = "_to_" + str(dtype).removeprefix("torch.")
    getattr(mod, "k_" + name)[(triton.cdiv(x.numel(), 4096),)](x, out, x.numel(), BLOCK=4096)
    differ = out.view(torch.uint8) != x.to(dtype).view(torch.uint8)
    result[name] = [int(differ.sum()), x.numel(), x[differ][:5].tolist()]
print(json.dumps(result))
'''


def test_fp8_helpers_round_every_value_as_torch_does(tmp_path):
    """Every fp16 and bf16 value, every tie between neighbouring fp8 values (a plain .to() rounds
    50.0 to 52.0 under the interpreter), NaN, signed zeros, overflow: bit for bit torch's CPU cast."""
    result = interpreted(FP8_CHECK.format(path=str(tmp_path / "fp8_kernels.py")))
    assert set(result) == set(FP8_HELPERS) == {"_to_float8_e4m3fn", "_to_float8_e5m2"}
    for name, (differ, n, first) in result.items():
        assert n > 130000 and differ == 0, f"{name}: {differ} of {n} differ, first {first}"


# --- the plan ---------------------------------------------------------------------------------------

def test_zeros_like_is_a_constant_and_both_quotients_are_ieee():
    plan = analyse(lower(SERVING / "per_token_int8_quant.py"), "q")
    full = next(n for n in plan.maps if str(getattr(n, "target", "")) == "aten.full_like.default")
    assert (plan.scope[full], plan.cv[full]) == ("const", False)
    assert sorted(n.name for n in plan.exact) == ["div", "div_1"]  # scale = absmax / 127 and x / scale
    assert [o.kind for o in plan.outputs] == ["cols", "row"]


def test_a_global_scale_viewed_as_one_element_is_a_scalar_output():
    plan = analyse(lower(SERVING / "per_tensor_fp8_quant.py"), "q")
    scale = plan.outputs[1]
    assert scale.kind == "scalar" and scale.view is scale.node and tuple(scale.node.meta["val"].shape) == (1,)
    assert plan.outputs[0].kind == "cols" and plan.outputs[0].late  # q needs the global scale: the apply kernel


def test_a_quotient_that_is_not_quantised_keeps_the_plain_division(tmp_path):
    kernel = generate((ROOT / "ops" / "softmax.py").read_text(), "softmax", {})
    source = kernel.render(kernel.space[0])
    assert "div_rn" not in source and "_to_float8" not in source


def test_fp8_quant_uses_the_exact_helper_and_ieee_division(tmp_path):
    path, kernel = candidate(tmp_path, SERVING / "per_tensor_fp8_quant.py")
    source = path.read_text()
    assert kernel.family == "rowwise"
    assert "def _to_float8_e4m3fn(x):" in source and "_to_float8_e4m3fn(clamp_1)" in source
    assert "tl.math.div_rn(amax, 448.0)" in source and "tl.math.div_rn(_to_copy, clamp)" in source
    assert "res1.reshape(1)" in source


# --- end to end -------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", [SERVING / "per_token_int8_quant.py", VARIANTS / "per_token_asym_int8_quant.py",
                                  VARIANTS / "static_int8_quant.py"], ids=lambda p: p.stem)
def test_int8_quant_verifies(tmp_path, spec):
    path, _ = candidate(tmp_path, spec)
    v = verify(spec, path, OPTIONS)
    assert v["correct"], v["reasons"]


RUN_VARIANTS = '''
import importlib.util, json, torch
from opforge.harness.spec import load_module
reference = load_module({spec!r})
spec = importlib.util.spec_from_file_location("candidate", {path!r})
candidate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(candidate)
torch.manual_seed(0)
report = []
for inputs in reference.get_input_variants():
    expected, got = reference.Model()(*inputs), candidate.ModelNew()(*inputs)
    for e, g in zip(expected, got):
        same = (e.shape == g.shape and e.dtype == g.dtype
                and bool((e.view(torch.uint8) == g.view(torch.uint8)).all() if e.dtype.itemsize == 1
                         else torch.allclose(e, g, rtol=1e-6, atol=0)))
        report.append([str(e.dtype), list(g.shape), same])
print(json.dumps(report))
'''


@pytest.mark.parametrize("spec", [SERVING / "per_tensor_fp8_quant.py", VARIANTS / "per_token_fp8_quant.py",
                                  VARIANTS / "per_tensor_fp8_e5m2_quant.py"], ids=lambda p: p.stem)
def test_fp8_quant_is_bit_exact_on_every_variant(tmp_path, spec):
    """q bit for bit (subnormals, saturation, a zero row's floor scale), the scales to fp32's precision."""
    path, _ = candidate(tmp_path, spec)
    report = interpreted(textwrap.dedent(RUN_VARIANTS.format(spec=str(spec), path=str(path))))
    assert len(report) == 6 and report[0][0].startswith("torch.float8")
    assert all(same for _, _, same in report), report
