"""A CPU run is sized by its estimated cost (harness/cost.py), not only by its elements: a matmul
whose inputs fit the element cap but whose multiply-adds would take minutes under the interpreter
is shrunk until the estimate fits the budget; convolution hyperparameters stay as declared."""
from __future__ import annotations

import textwrap

from opforge.harness import cost
from opforge.harness.spec import load_spec
from opforge.harness.spec import work as spec_work
from opforge.harness.verify import CPU_MAX_BYTES, CPU_MAX_ELEMENTS

MATMUL = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)

M = 512
K = 512
N = 512

def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]

def get_init_inputs():
    return []
"""

CONV = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, groups=groups)

    def forward(self, x):
        return torch.relu(self.conv(x))

batch_size = 64
in_channels = 256
out_channels = 256
height = width = 128
kernel_size = 3
stride = 2
padding = 1
groups = 64

def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups]
"""


def _spec(tmp_path, name: str, source: str, budget: float | None):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return load_spec(path, max_elements=CPU_MAX_ELEMENTS, max_bytes=CPU_MAX_BYTES, backend="triton", budget_s=budget)


def test_a_matmul_within_the_element_cap_is_shrunk_until_its_estimated_run_fits_the_budget(tmp_path):
    by_elements = _spec(tmp_path, "mm", MATMUL, None)
    by_cost = _spec(tmp_path, "mm", MATMUL, cost.BUDGET_S)
    work = spec_work(by_elements.module(), by_elements.path)
    assert cost.estimate_s("triton", work, 3) > cost.BUDGET_S  # the element cap alone leaves minutes of dots
    used = by_cost.sizes_used
    assert used["M"] * used["K"] * used["N"] < by_elements.sizes_used["M"] * by_elements.sizes_used["K"] * by_elements.sizes_used["N"]
    assert by_cost.cost["budget_s"] == cost.BUDGET_S and by_cost.cost["estimated_s"] <= cost.BUDGET_S, by_cost.cost
    # the control: a problem already within the budget keeps its sizes
    small = _spec(tmp_path, "small", MATMUL.replace("= 512", "= 64"), cost.BUDGET_S)
    assert small.sizes_used == {"M": 64, "K": 64, "N": 64} and small.cost["estimated_s"] <= cost.BUDGET_S


def test_convolution_hyperparameters_stay_as_declared_while_channels_and_spatial_sizes_shrink(tmp_path):
    # a budget no size can meet: everything that may shrink does, and nothing else
    spec = _spec(tmp_path, "conv", CONV, 11.0)
    used = spec.sizes_used
    assert used["groups"] == 64 and used["kernel_size"] == 3 and used["stride"] == 2, used
    # channels stop where the constructor refuses them (64 groups): a halving it refuses is undone
    assert used["in_channels"] == used["out_channels"] == 64 and used["height"] < 32 and used["batch_size"] < 32, used
    assert spec.cost["estimated_s"] > 11.0  # recorded as it is, never claimed to fit


def test_a_backend_without_a_cost_model_is_sized_by_elements_alone(tmp_path):
    spec = load_spec(tmp_path / "mm.py" if (tmp_path / "mm.py").write_text(textwrap.dedent(MATMUL)) else None,
                     max_elements=CPU_MAX_ELEMENTS, max_bytes=CPU_MAX_BYTES, backend="cuda", budget_s=cost.BUDGET_S)
    assert spec.cost is None and spec.sizes_used["M"] * spec.sizes_used["N"] >= 256 * 512
