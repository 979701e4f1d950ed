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
    # the same where the spec cannot run on meta tensors (a size read from data): no shape facts to
    # check, the real sizing call passes its limits, and the constructor's refusal is what stops it
    data = CONV.replace("return [torch.rand(batch_size, in_channels, height, width)]",
                        "return [torch.rand(int(torch.tensor(batch_size).item()), in_channels, height, width)]")
    assert data != CONV
    used = _spec(tmp_path, "conv_data", data, 11.0).sizes_used
    assert used["in_channels"] == used["out_channels"] == 64 and used["groups"] == 64, used


def test_a_backend_without_a_cost_model_is_sized_by_elements_alone(tmp_path):
    spec = load_spec(tmp_path / "mm.py" if (tmp_path / "mm.py").write_text(textwrap.dedent(MATMUL)) else None,
                     max_elements=CPU_MAX_ELEMENTS, max_bytes=CPU_MAX_BYTES, backend="cuda", budget_s=cost.BUDGET_S)
    assert spec.cost is None and spec.sizes_used["M"] * spec.sizes_used["N"] >= 256 * 512


# -- 3-D convolutions: sized below the floor of 16, their shape facts kept (#36) ------------------------

CONV3D_T = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, cin, cout, kernel_size, stride, padding, output_padding, groups):
        super().__init__()
        self.up = nn.ConvTranspose3d(cin, cout, kernel_size, stride=stride, padding=padding,
                                     output_padding=output_padding, groups=groups)

    def forward(self, x):
        return torch.relu(self.up(x))

batch_size = 24
cin = 40
cout = 40
depth, height, width = 20, 28, 36
kernel_size = (3, 5, 3)
stride = (2, 1, 2)
padding = (1, 2, 1)
output_padding = (1, 0, 1)
groups = 4

def get_inputs():
    return [torch.rand(batch_size, cin, depth, height, width)]

def get_init_inputs():
    return [cin, cout, kernel_size, stride, padding, output_padding, groups]
"""

CONV3D_POOLED = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv3d(cin, cout, 3)
        self.pool = nn.MaxPool3d(2)

    def forward(self, x):
        return self.pool(self.pool(torch.softmax(self.conv(x), dim=1)))

batch_size = 48
cin = 3
cout = 24
depth, height, width = 16, 24, 24

def get_inputs():
    return [torch.rand(batch_size, cin, depth, height, width)]

def get_init_inputs():
    return [cin, cout]
"""


def test_a_3d_conv_over_budget_at_the_floor_shrinks_below_it_keeping_its_declared_shape_facts(tmp_path):
    spec = _spec(tmp_path, "convt3d", CONV3D_T, cost.BUDGET_S)
    used = spec.sizes_used
    # the floor of 16 alone left it minutes over the budget; below it, it fits
    assert min(used["batch_size"], used["cin"], used["depth"]) < 16 and spec.cost["estimated_s"] <= cost.BUDGET_S, used
    module = spec.module()
    up = module.Model(*module.get_init_inputs()).up
    assert (up.kernel_size, up.stride, up.padding, up.output_padding, up.groups) == ((3, 5, 3), (2, 1, 2), (1, 2, 1),
                                                                                    (1, 0, 1), 4)
    assert used["groups"] == 4 and used["cin"] % 4 == 0 and used["cout"] % 4 == 0, used  # divisible by the groups
    assert min(up(*module.get_inputs()).shape) >= 2
    # the pooled one: depth 16 -> conv 14 -> 7 -> 3; halving depth to 8 would leave a pooled dim of 1,
    # which the declared sizes do not have: it stays, while the batch and channels go below 16
    pooled = _spec(tmp_path, "pooled", CONV3D_POOLED, cost.BUDGET_S)
    assert pooled.sizes_used["depth"] == 16 and pooled.sizes_used["batch_size"] < 16, pooled.sizes_used
    # the control: without the cost budget the floor of 16 holds
    by_elements = _spec(tmp_path, "pooled", CONV3D_POOLED, None)
    assert min(v for k, v in by_elements.sizes_used.items() if k != "cin") >= 16, by_elements.sizes_used


def test_a_strided_transposed_conv_is_costed_by_its_phases_taps_not_every_tap():
    # ConvTranspose3d 8 -> 8, kernel 3, stride 2, over 4 x 6^3 -> 11^3 outputs: one launch per phase,
    # each with 1 or 2 taps per dim (27 in all over the 8 phases), about as many steps as a forward
    # conv of the same output and a 2-tap kernel
    phases = cost.conv_steps((4, 8, 6, 6, 6), (8, 8, 3, 3, 3), (4, 8, 11, 11, 11), (2, 2, 2), (1, 1, 1),
                             (1, 1, 1), True, 1)
    every_tap = cost.conv_steps((4, 8, 13, 13, 13), (8, 8, 3, 3, 3), (4, 8, 11, 11, 11), (1, 1, 1), (0, 0, 0),
                                (1, 1, 1), False, 1)
    assert phases < every_tap / 2, (phases, every_tap)
    assert cost._phases(11, 3, 2, 1, 1) == [(6, 1), (5, 2)]  # even outputs: tap 1; odd: taps 0 and 2
    assert cost._phases(9, 3, 2, 1, 2) == [(5, 0), (4, 3)]  # dilation 2: every tap lands on odd outputs


GEMM_GROUPNORM = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features, groups):
        super().__init__()
        self.gemm = nn.Linear(features, features)
        self.norm = nn.GroupNorm(groups, features)

    def forward(self, x):
        return self.norm(self.gemm(x))

batch_size = 1024
features = 8192
groups = 256

def get_inputs():
    return [torch.rand(batch_size, features)]

def get_init_inputs():
    return [features, groups]
"""


def test_sizing_keeps_more_than_one_channel_per_group_where_the_declared_sizes_have_it(tmp_path):
    # 256 groups of 32 channels: halving the channels to 256 leaves one per group, where GroupNorm
    # gives its bias whatever the input (a kernel computing x - x passed): they stop at 512
    spec = _spec(tmp_path, "gemm_gn", GEMM_GROUPNORM, cost.BUDGET_S)
    assert spec.sizes_used["features"] // spec.sizes_used["groups"] >= 2, spec.sizes_used
    assert spec.sizes_used["batch_size"] < 1024  # the control: what may shrink still does


VARIANT_BOUND = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.tanh(x) * 2

rows = 64
cols = 64

def get_inputs():
    return [torch.randn(rows, cols)]

def get_input_variants():
    return [[torch.randn(rows, cols)], [torch.randn(3000, 3000)]]
"""


def test_below_the_floor_only_a_halving_that_cuts_the_estimate_is_taken(tmp_path):
    # the run's cost is a variant of fixed size: halving the main case below 16 buys nothing, so it
    # stays at the floor instead of shrinking to 2 x 2 (still over the budget either way)
    spec = _spec(tmp_path, "variant_bound", VARIANT_BOUND, cost.BUDGET_S)
    assert spec.cost["estimated_s"] > cost.BUDGET_S, spec.cost
    assert spec.sizes_used == {"rows": 16, "cols": 16}, spec.sizes_used
