"""The expert's pooling generator (backends/triton/emit/window.py, codegen/families/window/): max and average pools over 1-3 spatial
dims, each inline spec lowered, generated and verified by the real harness on the CPU; what it does
not fuse is named."""
from __future__ import annotations

import re
import textwrap

import pytest

from opforge.codegen import generate
from opforge.backends.triton.emit import window
from opforge.codegen.lower import Unsupported, lower
from conftest import write
from opforge.backends.triton.static import check_source
from opforge.harness.verify import VerifyOptions, prepare, verify

OPTIONS = VerifyOptions(device="cpu", trials=1, seed=1, sandbox="none")

# Ragged sizes, padding, dilation and ceil_mode leave partial windows on every edge.
INLINE = {
    "max1d_dilated": ("torch.nn.MaxPool1d(4, stride=2, padding=2, dilation=3)",
                      "torch.randn(4, 6, 61)", "[torch.randn(1, 2, 17)]"),
    "max2d_ceil": ("torch.nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)",
                   "torch.randn(2, 5, 33, 20)", "[torch.randn(1, 3, 8, 9)]"),
    "max3d": ("torch.nn.MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=2)",
              "torch.randn(2, 3, 13, 11, 15)", ""),
    "avg1d_pad": ("torch.nn.AvgPool1d(5, stride=3, padding=2)", "torch.randn(3, 4, 50)", "[torch.randn(1, 1, 7)]"),
    "avg2d_exclude_pad_ceil": ("torch.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)",
                               "torch.randn(2, 4, 21, 18)", "[torch.randn(1, 2, 6, 5)]"),
    "avg3d_divisor": ("torch.nn.AvgPool3d(2, stride=(1, 2, 2), divisor_override=3)",
                      "torch.randn(2, 3, 9, 10, 11)", ""),
}
SPEC = '''import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = {module}

    def forward(self, x):
        return {forward}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []


def get_input_variants():
    return [{variants}]
'''


def _spec(tmp_path, name: str, forward: str = "self.pool(x)"):
    module, inputs, variants = INLINE[name]
    return write(tmp_path / f"{name}.py", SPEC.format(module=module, forward=forward, inputs=inputs,
                                                      variants=variants))


def _verify(tmp_path, spec) -> dict:
    loaded, _ = prepare(spec, OPTIONS)
    kernel = generate(spec.read_text(), spec.stem, loaded.sizes_used)
    assert kernel.family == "window"
    source = kernel.render(kernel.space[0])
    assert check_source(source, float32_spec=True).reasons == []
    v = verify(spec, write(tmp_path / "candidate.py", source), OPTIONS)
    assert v["correct"], v["reasons"]
    return v


@pytest.mark.parametrize("name", sorted(INLINE))
def test_inline_pool_verifies(tmp_path, name):
    v = _verify(tmp_path, _spec(tmp_path, name))
    assert f"_{name}_pool_kernel" in v["launches"]


def test_epilogue_after_the_pool_is_fused(tmp_path):
    spec = _spec(tmp_path, "max2d_ceil", forward="torch.sigmoid(self.pool(x)) * 2.0")
    _verify(tmp_path, spec)
    source = window.generate(lower(spec), "op", {}).render(window.SPACE[0])
    assert "fuses: sigmoid, mul" in source and source.count("tl.store(") == 1


def test_elementwise_prologue_is_applied_to_each_loaded_element(tmp_path):
    """LPPool: x ** 2 before an average pool, a root after. Lanes outside the input are reset after
    the prologue, so padding stays out of the average whatever the prologue makes of the filler."""
    spec = write(tmp_path / "lp.py", SPEC.format(module="torch.nn.AvgPool2d(3, stride=2, padding=1)",
                                                 forward="torch.sqrt(self.pool(torch.exp(x) ** 2) + 1e-6)",
                                                 inputs="torch.randn(2, 3, 17, 12)",
                                                 variants="[torch.randn(1, 2, 5, 4)]"))
    _verify(tmp_path, spec)
    lp = write(tmp_path / "lp_pool.py", SPEC.format(module="torch.nn.LPPool2d(2, 3, stride=2)", forward="self.pool(x)",
                                                    inputs="torch.randn(2, 4, 16, 15)", variants=""))
    source = window.generate(lower(lp), "op", {}).render(window.SPACE[0])
    assert "v = tl.where(inside, p_" in source
    _verify(tmp_path, lp)


def test_large_window_loops_instead_of_unrolling(tmp_path):
    small = window.generate(lower(_spec(tmp_path, "max3d")), "op", {}).render(window.SPACE[0])
    big = write(tmp_path / "big.py", SPEC.format(module="torch.nn.AvgPool2d(9)", forward="self.pool(x)",
                                                 inputs="torch.randn(1, 2, 30, 30)", variants=""))
    assert "tl.static_range(KD)" in small  # 27 elements unroll
    assert "for kd in range(KD)" in window.generate(lower(big), "op", {}).render(window.SPACE[0])


@pytest.mark.parametrize("forward, reason", [
    ("self.pool(x + x.mean())", "computed by aten.add"),  # a prologue of two tensors is not fused
    ("self.pool(x) + self.pool(x * 2)", "2 pooling ops"),
])
def test_unfusable_pool_graphs_name_what_is_not_supported(tmp_path, forward, reason):
    spec = _spec(tmp_path, "avg1d_pad", forward=forward)
    with pytest.raises(Unsupported, match=re.escape(reason)):
        window.generate(lower(spec), "op", {})


def test_return_indices_is_unsupported(tmp_path):
    spec = write(tmp_path / "idx.py", textwrap.dedent('''\
        import torch

        class Model(torch.nn.Module):
            def forward(self, x):
                return torch.nn.functional.max_pool2d(x, 2, return_indices=True)[1]

        def get_inputs():
            return [torch.randn(1, 2, 8, 8)]

        def get_init_inputs():
            return []
        '''))
    with pytest.raises(Unsupported, match="indices"):
        window.generate(lower(spec), "op", {})
