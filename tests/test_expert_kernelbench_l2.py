"""The expert's programs on KernelBench level-2 patterns (tests/data/kernelbench_l2/: files of our own
in KernelBench's style: modules built in __init__ with default init, module-level size constants at
KernelBench's sizes, get_init_inputs): each file drafted by the expert drafter, its ModelNew run
under Triton's interpreter at tiny sizes against the reference (parameters and running statistics
perturbed, so a kernel that drops a norm's affine map or a bias fails), in one fresh process for
all files. A program whose hand-off between kernels is broken fails the same check. The export's
shrunk sizes keep the relations between size constants (codegen/exportsizes.py)."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "kernelbench_l2"

# The sizes the harness would verify with on a CPU, only smaller: counts such as num_groups stay as
# declared (the harness shrinks the largest constants first).
SIZES = {
    "gemm_swish_sum_groupnorm": {"batch_size": 4, "in_features": 16, "out_features": 256},
    "gemm_batchnorm_gelu_relu": {"batch_size": 8, "in_features": 16, "out_features": 24},
    "gemm_batchnorm_biasadd_divide_swish": {"batch_size": 8, "in_features": 16, "out_features": 24},
    "gemm_max_subtract_gelu": {"batch_size": 4, "in_features": 16, "out_features": 24},
    "gemm_sigmoid_scaling_residualadd": {"batch_size": 4, "input_size": 16, "hidden_size": 24},
    "matmul_sigmoid_sum_logsumexp": {"batch_size": 4, "input_size": 16, "hidden_size": 24},
    "matmul_divide_sum_scaling": {"batch_size": 4, "input_size": 16, "hidden_size": 24},
    "matmul_sum_max_avgpool_logsumexp_logsumexp": {"batch_size": 4, "in_features": 16, "out_features": 24},
    "gemm_layernorm_residual": {"batch_size": 4, "in_features": 16, "out_features": 24},
    "matmul_avgpool_gelu_scale_max": {"batch_size": 4, "in_features": 16, "out_features": 64},
    "bmm_scale_softmax": {"batch_size": 2, "m": 4, "k": 16, "n": 24},
    "conv2d_relu_biasadd": {"batch_size": 2, "in_channels": 3, "out_channels": 4, "height": 6, "width": 6},
    "conv2d_groupnorm_scale_maxpool_clamp": {"batch_size": 2, "in_channels": 3, "out_channels": 32,
                                             "height": 6, "width": 6},
    "conv2d_instancenorm_divide": {"batch_size": 2, "in_channels": 3, "out_channels": 4, "height": 6, "width": 6},
    "conv2d_batchnorm_scaling": {"batch_size": 2, "in_channels": 3, "out_channels": 4, "height": 6, "width": 6},
    "conv3d_softmax_maxpool": {"batch_size": 2, "in_channels": 2, "out_channels": 4, "depth": 4, "height": 4,
                               "width": 4},
    "convtranspose2d_maxpool_hardtanh_mean_tanh": {"batch_size": 2, "in_channels": 3, "out_channels": 4,
                                                   "height": 4, "width": 4},
    "conv2d_globalavgpool_biasadd_logsumexp_sum_multiply": {"batch_size": 2, "in_channels": 3, "out_channels": 16,
                                                            "height": 6, "width": 6},
}
# Patterns the expert refuses, each with a piece of its reason (a refusal is honest; a wrong program is not).
REFUSED: dict[str, str] = {}
CONTROL = "gemm_swish_sum_groupnorm"  # its program's hand-off broken: the check must fail


def _load(path: Path, sizes: dict) -> types.ModuleType:
    from opforge.harness.sizes import with_sizes

    module = types.ModuleType(path.stem)
    exec(compile(with_sizes(ast.parse(path.read_text()), sizes), str(path), "exec"), module.__dict__)
    return module


def _perturb(model) -> None:
    """Every parameter and buffer moved off its default init (a GroupNorm's ones and zeros would let
    a kernel that drops them pass); variances stay positive."""
    import torch

    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if t.is_floating_point():
                t.copy_(torch.rand_like(t) + 0.5 if name.endswith("running_var") else t + 0.3 * torch.randn_like(t))


def _check(source: str, module: types.ModuleType, label: str) -> tuple[str, str]:
    """("ok" | "wrong", detail): the candidate's ModelNew against the reference, in the spec's mode as the
    harness runs them (KernelBench's training mode unless OPFORGE["mode"] says eval: harness/mode.py)."""
    import torch

    from opforge.harness.mode import mode_of, set_mode

    candidate = types.ModuleType(label)
    exec(compile(source, f"<{label}>", "exec"), candidate.__dict__)
    init = module.get_init_inputs()
    torch.manual_seed(0)
    ref = module.Model(*init)
    _perturb(ref)
    mode = mode_of(getattr(module, "OPFORGE", None))
    set_mode(ref, mode)
    new = candidate.ModelNew(*init)
    new.load_state_dict(ref.state_dict(), strict=False)
    set_mode(new, mode)
    inputs = module.get_inputs()
    with torch.no_grad():
        want, got = ref(*[x.clone() for x in inputs]), new(*[x.clone() for x in inputs])
    if tuple(want.shape) != tuple(got.shape):
        return "wrong", f"shape {list(got.shape)} != {list(want.shape)}"
    err = (want - got).abs().max().item()
    ok = torch.allclose(want, got, atol=1e-4, rtol=1e-4)
    return ("ok" if ok else "wrong"), f"max abs error {err:.3g} (reference's max {want.abs().max().item():.3g})"


def _broken_handoff(source: str) -> str:
    """The program with its last kernel reading the previous kernel's result shifted by one column."""
    forward = source[source.index("    def forward("):]
    line = [ln for ln in forward.splitlines() if "v1 = " in ln][0]
    return source.replace(line, line.replace(", v0)", ", v0.roll(1, -1))"))


def _child(names: list[str]) -> None:
    import torch

    from opforge.agents.drafters.base import DraftRequest
    from opforge.agents.drafters.expert import ExpertDrafter

    torch.set_num_threads(1)
    for name in names:
        path = DATA / f"{name}.py"
        row, start = {"name": name}, time.perf_counter()
        try:
            request = DraftRequest(op=name, spec_source=path.read_text(), backend="triton",
                                   hardware="cpu/x86_64/triton-interpreter", sizes=SIZES[name])
            draft = ExpertDrafter().draft(request)[0]
            if draft.source is None:
                row.update(status="refused", detail=draft.problem)
            else:
                module = _load(path, SIZES[name])
                row["family"] = draft.meta.get("family")
                row["status"], row["detail"] = _check(draft.source, module, name)
                if name == CONTROL:
                    row["control"] = _check(_broken_handoff(draft.source), module, name + "_broken")
        except Exception as exc:  # noqa: BLE001 - reported, the parent fails on it
            row.update(status="error", detail=f"{type(exc).__name__}: {str(exc)[:300]}")
        row["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps(row), flush=True)


@pytest.fixture(scope="module")
def results() -> dict[str, dict]:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, __file__, *SIZES], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    rows = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert rows, proc.stderr[-3000:]
    return {r["name"]: r for r in rows}


def test_every_level2_file_is_drafted_right_or_refused_with_a_reason(results):
    assert sorted(results) == sorted(SIZES)
    bad = {n: r for n, r in results.items() if r["status"] != ("refused" if n in REFUSED else "ok")}
    assert not bad, json.dumps(bad, indent=1)
    for name, why in REFUSED.items():
        assert why in results[name]["detail"]


def test_a_program_with_its_hand_off_broken_fails_the_same_check(results):
    row = results[CONTROL]
    assert row["family"].startswith("program:") and row["status"] == "ok"
    assert row["control"][0] == "wrong", row["control"]


def test_export_sizes_keep_divisibility_and_order_between_size_constants():
    from opforge.codegen.exportsizes import export_sizes

    # GroupNorm's 64 groups of 4096 channels: not 48 groups of 48 (one channel each)
    got = export_sizes({"batch_size": 32768, "in_features": 1024, "out_features": 4096, "num_groups": 64})
    assert got["out_features"] % got["num_groups"] == 0 and got["out_features"] > got["num_groups"]
    # 32 groups of 64 channels: 48 would not divide by 32 (GroupNorm refuses it)
    assert export_sizes({"c": 64, "g": 32}) == {"c": 64, "g": 32}
    # a constant below 16 keeps dividing (GroupNorm(5, 80)), unrelated ones shrink as before
    small = export_sizes({"channels": 80, "groups": 5, "other": 1024, "tiny": 3})
    assert small["channels"] % 5 == 0 and small["channels"] <= 48 and small["other"] == 48


if __name__ == "__main__":
    _child(sys.argv[1:])
