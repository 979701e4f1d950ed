"""nn.Linear, then hardswish(y) multiplied by sigmoid(y) (a gate on the GEMM's own output), then a bias."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "hardswish", "sigmoid", "gate", "bias", "fused"])

batch_size = 1024
in_features = 1024
out_features = 512


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.1)

    def forward(self, x):
        y = self.fc(x)
        return torch.nn.functional.hardswish(y) * torch.sigmoid(y) + self.bias


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features) * 8], [torch.randn(2, 13, in_features)]]
