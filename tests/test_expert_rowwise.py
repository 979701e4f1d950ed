"""The row-wise expert generator: reductions and scans from real specs, each candidate verified by the
harness on the CPU (interpreter, AOT build for sm_90, anti-cheat); unsupported graphs name their ops."""
from __future__ import annotations

import textwrap

import pytest

from conftest import ROOT, write
from opforge.codegen.lower import Unsupported, lower
from opforge.backends.triton.emit.rowwise import generate
from opforge.harness.spec import load_module
from opforge.backends.triton.static import check_source
from opforge.harness.verify import VerifyOptions, prepare, verify

OPTIONS = VerifyOptions(device="cpu", trials=1, seed=1, sandbox="none")

SPEC = '''import torch
import torch.nn.functional as F

{sizes}


class Model(torch.nn.Module):
    def __init__(self{init}):
        super().__init__()
        {body}

    def forward(self, {args}):
        return {forward}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return [{init_args}]


def get_input_variants():
    return [{variants}]
'''

INLINE = {
    # KernelBench level 1 style: the reduced dim and keepdim come from the init arguments
    "sum_dim1_keepdim": dict(sizes="batch_size = 16\ndim1 = 256\ndim2 = 256\nreduce_dim = 1", init=", dim",
                             body="self.dim = dim", args="x", forward="torch.sum(x, dim=self.dim, keepdim=True)",
                             inputs="torch.randn(batch_size, dim1, dim2)", init_args="reduce_dim",
                             variants="[torch.randn(3, 37, 129)], [torch.randn(1, 9, 1001)]"),
    "var_last_dim": dict(args="x", forward="torch.var(x, dim=-1)", inputs="torch.randn(batch_size, dim)",
                         variants="[torch.randn(7, 333) + 100.0], [torch.randn(3, 5, 77)]"),
    "l2_normalize": dict(args="x", forward="x / torch.norm(x, p=2, dim=1, keepdim=True)",
                         inputs="torch.randn(batch_size, dim)", variants="[torch.randn(5, 1001)], [torch.randn(129, 3)]"),
    "mse_loss": dict(args="predictions, targets", forward="torch.mean((predictions - targets) ** 2)",
                     inputs="torch.randn(batch_size, dim), torch.randn(batch_size, dim)",
                     variants="[torch.randn(3, 1001), torch.randn(3, 1001)]"),
    "reverse_cumsum": dict(args="x", forward="torch.cumsum(x.flip(1), 1).flip(1)", inputs="torch.randn(batch_size, dim)",
                           variants="[torch.randn(9, 1333)], [torch.randn(4, 301, 7)]"),  # 3-D: dim 1 from the left
    "exclusive_cumsum": dict(args="x", forward="torch.cumsum(x, dim=-1) - x", inputs="torch.randn(batch_size, dim)",
                             variants="[torch.randn(13, 2049)], [torch.randn(300, 1)]"),
    # gather of one column per row (the target's log-probability); ignored targets leave the mean
    "cross_entropy_ignore": dict(args="logits, targets", forward="F.cross_entropy(logits, targets)",
                                 inputs="torch.randn(batch_size, dim), torch.randint(0, dim, (batch_size,))",
                                 variants="[torch.randn(9, 1001) * 4, "
                                          "torch.where(torch.rand(9) < 0.3, -100, torch.randint(0, 1001, (9,)))]"),
    # a per-head norm: the input viewed [B, T, H, D] from its own sizes, the result viewed back
    "per_head_rms_norm": dict(sizes="batch_size = 4\nseq = 64\nheads = 8\nhead_dim = 64", init=", heads",
                              body="self.heads = heads\n        self.weight = torch.nn.Parameter(torch.randn(head_dim))",
                              args="q", forward="(lambda x: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)"
                                             " * self.weight)(q.view(q.shape[0], q.shape[1], self.heads, -1))"
                                             ".view(q.shape[0], q.shape[1], -1)",
                              inputs="torch.randn(batch_size, seq, heads * head_dim)", init_args="heads",
                              variants="[torch.randn(2, 5, heads * head_dim) * 3]"),
    # read through a transpose and written back through one: both replayed by the launcher
    "softmax_transposed_back": dict(args="x", forward="torch.softmax(x.transpose(1, 2), dim=-1).transpose(1, 2)",
                                    inputs="torch.randn(batch_size, 33, dim)", variants="[torch.randn(2, 7, 65)]"),
    # a full reduction used per element: row kernel, finish kernel, apply kernel
    "frobenius_norm": dict(args="x", forward="x / torch.norm(x, p='fro')", inputs="torch.randn(batch_size, dim)",
                           variants="[torch.randn(2, 5, 129)]"),
    # batchmean divides by a size torch.export bakes in as a literal
    "kl_div_batchmean": dict(args="p, q", forward="F.kl_div(torch.log(p), q, reduction='batchmean')",
                             inputs="torch.rand(batch_size, dim) + 0.1, torch.rand(batch_size, dim) + 0.1",
                             variants="[torch.rand(7, 1001) + 0.1, torch.rand(7, 1001) + 0.1]"),
}


def inline_spec(tmp_path, name: str):
    fields = dict(sizes="batch_size = 4096\ndim = 4096", init="", body="pass", init_args="", variants="")
    fields.update(INLINE[name])
    return write(tmp_path / f"{name}.py", SPEC.format(**fields))


def state_shapes(spec_path) -> dict:
    """Parameter shapes at the sizes the harness verifies with (CPU runs shrink the spec's sizes)."""
    spec, _ = prepare(spec_path, OPTIONS)
    module = load_module(spec_path, spec.sizes_used)
    model = module.Model(*module.get_init_inputs())
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}


def candidate(tmp_path, spec_path, title: str, config: int = 0):
    kernel = generate(lower(spec_path), title, state_shapes(spec_path))
    return write(tmp_path / f"{title}_candidate.py", kernel.render(kernel.space[config])), kernel


def assert_verified(spec_path, kernel_path) -> dict:
    v = verify(spec_path, kernel_path, OPTIONS)
    assert v["correct"], v["reasons"]
    return v


@pytest.mark.parametrize("op", ["softmax", "log_softmax", "layer_norm", "rms_norm", "row_sum", "row_mean",
                                "row_max", "row_argmax", "cumsum"])
def test_ops_spec_verifies(tmp_path, op):
    spec = ROOT / "ops" / f"{op}.py"
    path, kernel = candidate(tmp_path, spec, op)
    v = assert_verified(spec, path)
    assert f"_{op}_row_kernel" in v["launches"]
    assert kernel.family == "rowwise" and kernel.space[0]["TILE"] >= 256


@pytest.mark.parametrize("name", sorted(INLINE))
def test_inline_spec_verifies(tmp_path, name):
    spec = inline_spec(tmp_path, name)
    path, _ = candidate(tmp_path, spec, name)
    assert_verified(spec, path)


def test_full_reduction_used_per_element_runs_three_kernels(tmp_path):
    spec = inline_spec(tmp_path, "frobenius_norm")
    path, _ = candidate(tmp_path, spec, "frob")
    v = assert_verified(spec, path)
    assert set(v["launches"]) == {"_frob_row_kernel", "_frob_finish_kernel", "_frob_apply_kernel"}


def test_every_config_renders_a_statically_clean_file(tmp_path):
    spec = ROOT / "ops" / "layer_norm.py"
    kernel = generate(lower(spec), "layer_norm", state_shapes(spec))
    assert len(kernel.space) >= 3
    for config in kernel.space:
        source = kernel.render(config)
        assert check_source(source, float32_spec=True).reasons == []
        assert f"TILE, NUM_WARPS = {config['TILE']}, {config['num_warps']}" in source


def test_fusion_is_commented_and_scratch_free(tmp_path):
    spec = ROOT / "ops" / "softmax.py"
    source = generate(lower(spec), "softmax", {}).render({"TILE": 1024, "num_warps": 4})
    assert "fused: sub -> exp -> sum" in source
    assert "tl.program_id(0).to(tl.int64)" in source
    assert "_part" not in source and "glob" not in source  # row reductions recompute, they store nothing


def test_title_becomes_an_identifier(tmp_path):
    source = generate(lower(ROOT / "ops" / "row_sum.py"), "23_Sum reduction", {}).render({"TILE": 512, "num_warps": 4})
    assert "def _op_23_Sum_reduction_row_kernel(" in source and "def op_23_Sum_reduction(" in source


@pytest.mark.parametrize("op, missing", [("matmul", "aten.mm")])
def test_unsupported_graph_names_the_op(op, missing):
    with pytest.raises(Unsupported, match=missing):
        generate(lower(ROOT / "ops" / f"{op}.py"), op, {})


def test_reductions_over_different_dims_are_unsupported(tmp_path):
    spec = write(tmp_path / "two_dims.py", textwrap.dedent('''\
        import torch

        class Model(torch.nn.Module):
            def forward(self, x):
                return x.sum(dim=1, keepdim=True) + x.amax(dim=2, keepdim=True)

        def get_inputs():
            return [torch.randn(4, 8, 8)]

        def get_init_inputs():
            return []
        '''))
    with pytest.raises(Unsupported, match="different dims"):
        generate(lower(spec), "two_dims", {})


def test_gather_of_several_columns_per_row_is_unsupported(tmp_path):
    spec = write(tmp_path / "top2.py", textwrap.dedent('''\
        import torch

        class Model(torch.nn.Module):
            def forward(self, x, idx):
                return torch.gather(torch.softmax(x, dim=1), 1, idx)

        def get_inputs():
            return [torch.randn(4, 8), torch.randint(0, 8, (4, 2))]

        def get_init_inputs():
            return []
        '''))
    with pytest.raises(Unsupported, match="only one index per row"):
        generate(lower(spec), "top2", {})
