"""nn.Linear, SiLU (swish), a learned bias added after the activation, then a clamp to [-1, 1]."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "silu", "swish", "bias", "clamp", "fused"])

batch_size = 2048
in_features = 512
out_features = 1024


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.5)

    def forward(self, x):
        return torch.clamp(torch.nn.functional.silu(self.fc(x)) + self.bias, -1.0, 1.0)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features)], [torch.randn(35, in_features) * 3]]
