"""torch.matmul with a [K, N] weight parameter, Mish, then a clamp to [-0.3, 2.0]."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["matmul", "mish", "clamp", "fused"])

batch_size = 1024
in_features = 1024
out_features = 1024


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)

    def forward(self, x):
        return torch.clamp(torch.nn.functional.mish(torch.matmul(x, self.weight)), -0.3, 2.0)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features)], [torch.randn(2, 5, in_features) * 3]]
