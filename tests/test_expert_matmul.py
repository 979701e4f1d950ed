"""The expert's matmul generator (codegen/families/matmul/, backends/triton/emit/matmul*.py): suite and inline specs are lowered,
generated, and the first configuration of each is verified by the real harness on the CPU."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from opforge.backends.triton.emit import matmul
from opforge.codegen.lower import Unsupported, lower, state_shapes
from conftest import ROOT, write
from opforge.backends.triton.static import check_source
from opforge.harness.verify import VerifyOptions, prepare, verify

OPTIONS = VerifyOptions(device="cpu", trials=1, seed=1, sandbox="none")
HEAD = "import torch\n\n"
TAIL = "\n\ndef get_init_inputs():\n    return []\n"

# Small KernelBench-style specs; ragged sizes leave partial tiles on every side.
INLINE = {
    "a_t_b": """
        class Model(torch.nn.Module):
            def forward(self, A, B):
                return torch.matmul(A.T, B)

        def get_inputs():
            return [torch.randn(40, 33), torch.randn(40, 20)]
        """,
    "a_b_t": """
        class Model(torch.nn.Module):
            def forward(self, A, B):
                return torch.matmul(A, B.T)

        def get_inputs():
            return [torch.randn(33, 40), torch.randn(20, 40)]

        def get_input_variants():
            return [[torch.randn(3, 70), torch.randn(5, 70)]]
        """,
    "matrix_vector": """
        class Model(torch.nn.Module):
            def forward(self, A, B):
                return torch.matmul(A, B)

        def get_inputs():
            return [torch.randn(70, 40), torch.randn(40, 1)]

        def get_input_variants():
            return [[torch.randn(7, 33), torch.randn(33, 1)]]
        """,
    "row_vector": """
        class Model(torch.nn.Module):
            def forward(self, A, B):
                return torch.matmul(A, B)

        def get_inputs():
            return [torch.randn(1, 40), torch.randn(40, 70)]

        def get_input_variants():
            return [[torch.randn(1, 33), torch.randn(33, 5)]]
        """,
    "tensor3d_matrix": """
        class Model(torch.nn.Module):
            def forward(self, A, B):
                return torch.matmul(A, B)

        def get_inputs():
            return [torch.randn(3, 17, 40), torch.randn(40, 24)]

        def get_input_variants():
            return [[torch.randn(2, 5, 40), torch.randn(40, 3)]]
        """,
    "linear_relu": """
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(40, 24)

            def forward(self, x):
                return torch.relu(self.fc(x))

        def get_inputs():
            return [torch.randn(33, 40)]

        def get_input_variants():
            return [[torch.randn(2, 3, 40)]]
        """,
    "scale_bias": """
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bias = torch.nn.Parameter(torch.randn(24))

            def forward(self, A, B):
                return (A @ B) * 0.5 + self.bias

        def get_inputs():
            return [torch.randn(33, 40), torch.randn(40, 24)]
        """,
    "batched_scores": """
        class Model(torch.nn.Module):
            def forward(self, q, k, column):
                return (q @ k.transpose(-2, -1)) * 0.125 + column

        def get_inputs():
            return [torch.randn(2, 3, 20, 16), torch.randn(2, 3, 24, 16), torch.randn(20, 1)]
        """,
    # torch.tril/triu lower to arange masks: each arange becomes the tile's row or column index
    "tril_product": """
        class Model(torch.nn.Module):
            def forward(self, A, B):
                return torch.tril(torch.matmul(A, B))

        def get_inputs():
            return [torch.randn(33, 40), torch.randn(40, 70)]

        def get_input_variants():
            return [[torch.randn(70, 5), torch.randn(5, 9)]]
        """,
    "triu_batched_offset": """
        class Model(torch.nn.Module):
            def forward(self, A, B):
                return torch.triu(torch.bmm(A, B), diagonal=1)

        def get_inputs():
            return [torch.randn(3, 33, 40), torch.randn(3, 40, 33)]
        """,
    "arange_ramp": """
        class Model(torch.nn.Module):
            def forward(self, A, B):
                return (A @ B) * torch.arange(1, 2 * B.shape[1] + 1, 2, dtype=torch.float32)

        def get_inputs():
            return [torch.randn(33, 40), torch.randn(40, 24)]
        """,
    "viewed_epilogue": """
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(32, 24, bias=False)

            def forward(self, x, residual):
                return torch.sigmoid(self.fc(x * 2.0) + residual)

        def get_inputs():
            return [torch.randn(3, 16, 32), torch.randn(3, 16, 24)]
        """,
    # W8A8: int8 operands cast to fp32 inside the kernel (an int32 dot per tile), per-row and per-column scales.
    "int8_scaled": """
        class Model(torch.nn.Module):
            def forward(self, a, b, sa, sb):
                return torch.mm(a.float(), b.float()) * sa * sb

        def get_inputs():
            return [torch.randint(-127, 128, (33, 70), dtype=torch.int8), torch.randint(-127, 128, (70, 20), dtype=torch.int8),
                    torch.rand(33, 1) * 0.01, torch.rand(1, 20) * 0.01]

        def get_input_variants():
            return [[torch.randint(-127, 128, (1, 40), dtype=torch.int8), torch.randint(-127, 128, (40, 9), dtype=torch.int8),
                     torch.rand(1, 1) * 0.01, torch.rand(1, 9) * 0.01]]
        """,
    # e5m2 activations times e4m3 weights, one tensor scale, fp32 out.
    "fp8_mixed": """
        class Model(torch.nn.Module):
            def forward(self, a, b, s):
                return torch.mm(a.float(), b.float()) * s

        def get_inputs():
            return [torch.randn(33, 70).mul(16).to(torch.float8_e5m2), torch.randn(70, 20).mul(16).to(torch.float8_e4m3fn),
                    torch.rand(1)]
        """,
    # bf16 operands upcast to fp32 (a true fp32 product), the result rounded back to bf16.
    "bf16_upcast": """
        class Model(torch.nn.Module):
            def forward(self, x, w):
                return (x.float() @ w.float().t()).to(torch.bfloat16)

        def get_inputs():
            return [torch.randn(3, 17, 40).to(torch.bfloat16), torch.randn(24, 40).to(torch.bfloat16)]
        """,
}


def _spec(tmp_path: Path, name: str) -> Path:
    return write(tmp_path / f"{name}.py", HEAD + textwrap.dedent(INLINE[name]) + TAIL)


def _generate(spec: Path, title: str):
    loaded, _hardware = prepare(spec, OPTIONS)
    return matmul.generate(lower(spec), title, state_shapes(spec, loaded.sizes_used))


def _verify(spec: Path, source: str, tmp_path: Path) -> dict:
    kernel_path = write(tmp_path / "candidate.py", source)
    return verify(spec, kernel_path, OPTIONS)


@pytest.mark.parametrize("op", ["matmul", "bmm", "linear_bias_gelu"])
def test_suite_matmul_specs_verify(op, tmp_path):
    spec = ROOT / "ops" / f"{op}.py"
    kernel = _generate(spec, op)
    v = _verify(spec, kernel.render(kernel.space[0]), tmp_path)
    assert v["correct"], v["reasons"]
    assert v["build"]["kernels"][0]["kernel"] == f"_{op}_matmul_kernel"


@pytest.mark.parametrize("name", sorted(INLINE))
def test_inline_specs_verify(name, tmp_path):
    spec = _spec(tmp_path, name)
    kernel = _generate(spec, name)
    v = _verify(spec, kernel.render(kernel.space[0]), tmp_path)
    assert v["correct"], v["reasons"]


def test_operand_views_become_strides_and_source_passes_static_checks(tmp_path):
    source = _generate(_spec(tmp_path, "a_t_b"), "a_t_b").render(matmul.SPACE[0])
    assert check_source(source, float32_spec=True).reasons == []
    launcher = source[source.index("def a_t_b("):source.index("class ModelNew")]
    assert "a.permute(1, 0)" in launcher and ".contiguous()" not in launcher  # A.T read through strides
    assert 'input_precision="ieee"' in source and "torch.empty(" in launcher


def test_space_is_valid_and_skinny_tiles_come_first_for_a_row_vector(tmp_path):
    space = _generate(_spec(tmp_path, "row_vector"), "rv").space
    assert space[0] == matmul.SKINNY_M and space[0]["BLOCK_M"] == 16
    square = _generate(ROOT / "ops" / "matmul.py", "mm").space
    assert square[0] == matmul.SPACE[0] and matmul.SKINNY_M in square  # kept for tuning, not first
    for config in space:
        blocks = [config[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")]
        assert all(b >= 16 and b & (b - 1) == 0 for b in blocks), config
        assert {"GROUP_M", "num_warps", "num_stages"} <= config.keys()


def test_graph_without_matmul_is_unsupported():
    with pytest.raises(Unsupported, match="no aten.mm"):
        matmul.generate(lower(ROOT / "ops" / "silu.py"), "silu", {})


@pytest.mark.parametrize("forward, reason", [
    ("torch.softmax(a @ b, dim=-1)", "aten.amax"),  # a reduction after the product
    ("torch.relu(a) @ b", "aten.relu"),  # a computed operand (only scalar multiplies are folded)
    ("(a @ b) @ b", "2 matmuls"),
    ("(a @ b) * torch.arange(400.0).view(20, 20)", "aten.arange"),  # not one result dim's index
])
def test_unfusable_graphs_name_what_is_not_supported(forward, reason, tmp_path):
    spec = write(tmp_path / "spec.py", HEAD + textwrap.dedent(f"""
        class Model(torch.nn.Module):
            def forward(self, a, b):
                return {forward}

        def get_inputs():
            return [torch.randn(20, 20), torch.randn(20, 20)]
        """) + TAIL)
    with pytest.raises(Unsupported, match=re.escape(reason)):
        matmul.generate(lower(spec), "op", {})


@pytest.mark.parametrize("name, dot, width", [("int8_scaled", "out_dtype=tl.int32", "torch.int8"),
                                              ("fp8_mixed", "a.to(tl.bfloat16), b.to(tl.bfloat16)", None),
                                              ("bf16_upcast", 'a = a.to(tl.float32)', None)])
def test_operand_casts_are_applied_to_the_loaded_tiles(name, dot, width, tmp_path):
    """A cast operand is read at its own width by the one matmul kernel (no pointwise kernel writes an
    fp32 copy first), and the dot suits its dtype."""
    kernel = _generate(_spec(tmp_path, name), name)
    source = kernel.render(kernel.space[0])
    assert kernel.family == "matmul" and dot in source
    assert "pointwise" not in source
    launcher = source[source.index(f"def {name}("):source.index("class ModelNew")]
    assert ".float()" not in launcher and ".to(torch.float32)" not in launcher
