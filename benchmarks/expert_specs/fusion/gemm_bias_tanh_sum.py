"""Bias-free nn.Linear, a separate learned bias, tanh, then the sum over features: one value per row."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "bias", "tanh", "sum", "reduction", "fused"])

batch_size = 2048
in_features = 1024
out_features = 512


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.5)

    def forward(self, x):
        return torch.tanh(self.fc(x) + self.bias).sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features)], [torch.randn(45, in_features)]]
