"""nn.Linear, exact GELU, a learned per-feature multiplier, then softmax over the features."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "gelu", "scale", "softmax", "fused"])

batch_size = 512
in_features = 2048
out_features = 1024


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.mult = nn.Parameter(torch.randn(out_features) * 2)

    def forward(self, x):
        return torch.softmax(torch.nn.functional.gelu(self.fc(x)) * self.mult, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features) * 30], [torch.randn(3, 11, in_features)]]
