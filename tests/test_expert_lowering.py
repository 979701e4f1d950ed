"""The lowering's own rewrites (codegen/lower.py): composite modules whose stock decomposition no
generated kernel could keep shape-generic (InstanceNorm, GroupNorm, BatchNorm in eval mode) and
torch.diag products. Each spec goes through the expert's dispatcher and its first candidate is verified by the
real harness on the CPU; the graph checks pin what the rewrite produced."""
from __future__ import annotations

import textwrap

import pytest

from opforge.codegen import generate
from opforge.codegen.lower import Unsupported, lower
from conftest import write
from opforge.harness.verify import VerifyOptions, prepare, verify

OPTIONS = VerifyOptions(device="cpu", trials=1, seed=1, sandbox="none")

SPECS = {
    # affine weights drawn at random so a dropped scale or shift cannot pass
    "instance_norm": ("rowwise", """
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = torch.nn.InstanceNorm2d(8, affine=True)
                torch.nn.init.normal_(self.norm.weight)
                torch.nn.init.normal_(self.norm.bias)

            def forward(self, x):
                return self.norm(x)

        def get_inputs():
            return [torch.randn(4, 8, 24, 20)]

        def get_input_variants():
            return [[torch.randn(2, 8, 7, 33) * 5 + 3]]
        """),
    "group_norm": ("rowwise", """
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = torch.nn.GroupNorm(4, 12)
                torch.nn.init.normal_(self.norm.weight)
                torch.nn.init.normal_(self.norm.bias)

            def forward(self, x):
                return self.norm(x)

        def get_inputs():
            return [torch.randn(3, 12, 10, 9)]

        def get_input_variants():
            return [[torch.randn(2, 12, 33, 7) * 4 + 50], [torch.randn(1, 12, 1, 1)]]
        """),
    "batch_norm_eval": ("pointwise", """
        OPFORGE = dict(mode="eval")

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = torch.nn.BatchNorm2d(8)
                for t in (self.bn.weight, self.bn.bias, self.bn.running_mean):
                    torch.nn.init.normal_(t)
                self.bn.running_var.uniform_(0.5, 2.0)

            def forward(self, x):
                return self.bn(x)

        def get_inputs():
            return [torch.randn(4, 8, 24, 20)]

        def get_input_variants():
            return [[torch.randn(1, 8, 3, 65)]]
        """),
    # chunk lowers to slices whose bounds are re-read as halves of the run-time size (any rank)
    "swiglu_chunk": ("pointwise", """
        class Model(torch.nn.Module):
            def forward(self, x):
                gate, up = x.chunk(2, dim=-1)
                return torch.nn.functional.silu(gate) * up

        def get_inputs():
            return [torch.randn(16, 2 * 40)]

        def get_input_variants():
            return [[torch.randn(3, 4, 2 * 33)], [torch.randn(5, 2)]]
        """),
    # a column of each input selected, then a mean: the selects are leaves the launcher rebuilds
    "margin_ranking": ("rowwise", """
        class Model(torch.nn.Module):
            def forward(self, x, y):
                return torch.nn.functional.margin_ranking_loss(x[:, 0], y[:, 0], torch.sign(x[:, 1]), margin=0.3)

        def get_inputs():
            return [torch.randn(64, 5), torch.randn(64, 5)]

        def get_input_variants():
            return [[torch.randn(7, 2), torch.randn(7, 3)]]
        """),
    # BCE with logits leaves a dtype assertion in the graph; the lowering drops it
    "bce_with_logits": ("rowwise", """
        class Model(torch.nn.Module):
            def forward(self, logits, targets):
                return torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)

        def get_inputs():
            return [torch.randn(32, 50) * 4, (torch.rand(32, 50) > 0.5).float()]
        """),
    # elementwise ops written from formulas: ties round to even, trunc toward zero
    "rounding_and_hyperbolic": ("pointwise", """
        class Model(torch.nn.Module):
            def forward(self, x):
                return (torch.round(x * 2) + torch.trunc(x * 3) + torch.frac(x) + torch.asinh(x) + torch.sinh(x)
                        + torch.log10(x.abs() + 1) + torch.hypot(x, x * 2) + torch.nn.functional.logsigmoid(x))

        def get_inputs():
            return [torch.randn(64, 33) * 3]

        def get_input_variants():
            return [[torch.arange(-40, 40).float().view(8, 10) / 4], [torch.randn(5, 7) * 1e-6]]
        """),
    # a global max pool (adaptive to size 1) is a max over the spatial dims
    "global_max_pool": ("rowwise", """
        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.nn.functional.adaptive_max_pool2d(x, 1)

        def get_inputs():
            return [torch.randn(4, 6, 9, 13)]

        def get_input_variants():
            return [[-torch.rand(2, 6, 1, 31) - 1]]
        """),
    "diag_left": ("pointwise", """
        class Model(torch.nn.Module):
            def forward(self, v, B):
                return torch.diag(v) @ B

        def get_inputs():
            return [torch.randn(40), torch.randn(40, 33)]

        def get_input_variants():
            return [[torch.randn(7), torch.randn(7, 129)]]
        """),
    "diag_right": ("pointwise", """
        class Model(torch.nn.Module):
            def forward(self, A, v):
                return torch.matmul(A, torch.diag(v))

        def get_inputs():
            return [torch.randn(33, 40), torch.randn(40)]
        """),
    # 0-d tensors built in forward are lifted by torch.export; the lowering folds them back to numbers
    "tensor_constants": ("pointwise", """
        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.where(x > 0, x, torch.tensor(0.5)) * torch.tensor(3, dtype=torch.int32) \\
                    + torch.tensor(True)

        def get_inputs():
            return [torch.randn(40, 33)]

        def get_input_variants():
            return [[torch.randn(3, 7, 5)]]
        """),
}


def _spec(tmp_path, name: str):
    body = "import torch\n" + textwrap.dedent(SPECS[name][1]) + "\n\ndef get_init_inputs():\n    return []\n"
    return write(tmp_path / f"{name}.py", body)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_rewritten_spec_verifies(tmp_path, name):
    spec = _spec(tmp_path, name)
    loaded, _ = prepare(spec, OPTIONS)
    kernel = generate(spec.read_text(), name, loaded.sizes_used)
    assert kernel.family == SPECS[name][0]
    path = write(tmp_path / "candidate.py", kernel.render(kernel.space[0]))
    v = verify(spec, path, OPTIONS)
    assert v["correct"], v["reasons"]


def test_instance_norm_reduces_each_plane_without_baked_sizes(tmp_path):
    ops = [str(n.target) for n in lower(_spec(tmp_path, "instance_norm")).graph.nodes if n.op == "call_function"]
    assert ops.count("aten.mean.dim") == 2  # the mean, then the mean of squared deviations
    assert "aten.view.default" in ops and not any("batch_norm" in op for op in ops)
    views = [n.args[1] for n in lower(_spec(tmp_path, "instance_norm")).graph.nodes
             if str(n.target) == "aten.view.default"]
    assert all(list(shape) == [1, -1, 1, 1] for shape in views)  # per-channel weights, no batch*channels fold


def test_group_norm_reads_its_weights_per_channel_without_copying_them(tmp_path):
    spec = _spec(tmp_path, "group_norm")
    source = generate(spec.read_text(), "gn", {}).render({"TILE": 1024, "num_warps": 4})
    # x is viewed [N, G, C/G, *S] from its own sizes; the weights repeat over positions: c // inner
    assert "x.reshape(x.shape[0], 4, x.shape[1] // 4, x.shape[2], x.shape[3])" in source
    assert "_as_part_rows(" in source and "// view_1_inner" in source.replace("(c // ", "// ")
    assert "res0.reshape(res0.shape[0], res0.shape[1] * res0.shape[2]" in source


def test_diag_product_loses_its_matmul(tmp_path):
    ops = {str(n.target) for n in lower(_spec(tmp_path, "diag_left")).graph.nodes if n.op == "call_function"}
    assert "aten.mm.default" not in ops and "aten.arange.start_step" not in ops
    assert "aten.mul.Tensor" in ops



def test_zero_d_tensor_constants_become_numbers_and_larger_ones_are_named(tmp_path):
    lowered = lower(_spec(tmp_path, "tensor_constants"))
    constants = sorted(str(n.args[0]) for n in lowered.graph.nodes if str(n.target) == "aten.scalar_tensor.default")
    assert constants == ["0.5", "3", "True"] and [p.name for p in lowered.placeholders] == ["x"]
    table = write(tmp_path / "table.py", "import torch\n\nclass Model(torch.nn.Module):\n"
                  "    def forward(self, x):\n        return x * torch.tensor([1.0, 2.0, 3.0])\n\n"
                  "def get_inputs():\n    return [torch.randn(4, 3)]\n\ndef get_init_inputs():\n    return []\n")
    with pytest.raises(Unsupported, match=r"tensor constants created in forward \(\[3\] torch.float32\)"):
        lower(table)


def test_the_lowerings_caches_follow_new_composite_registrations():
    """The decomposition table and torch.export's CompositeImplicitAutograd materialization are
    kept between lowerings (lower._table, _cia_materialized_once) only while the dispatcher's CIA
    registrations stay the same: an op registered later is seen as if nothing were cached."""
    import importlib

    import torch
    from torch._export import utils

    lowering = importlib.import_module("opforge.codegen.lower")  # the module: codegen exports a function of its name

    first = lowering._table()
    assert lowering._table() is first
    utils._collect_all_valid_cia_ops()  # materialized for today's registrations
    lib = torch.library.Library("opforge_cia_probe", "DEF")
    try:
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")
        found = {op.name() for op in utils._collect_all_valid_cia_ops()}  # before anything here touches torch.ops
        assert "opforge_cia_probe::twice" in found
        assert lowering._table() is not first
    finally:
        lib._destroy()
