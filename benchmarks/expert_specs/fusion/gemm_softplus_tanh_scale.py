"""nn.Linear, softplus, tanh, then a learned scalar scale."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "softplus", "tanh", "scale", "fused"])

batch_size = 1024
in_features = 1024
out_features = 768


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.tensor(1.75))

    def forward(self, x):
        return torch.tanh(torch.nn.functional.softplus(self.fc(x))) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features) * 50], [torch.randn(3, 3, in_features)]]
