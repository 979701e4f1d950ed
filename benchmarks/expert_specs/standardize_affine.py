"""Standardise with stored statistics: (x - mean) / std, mean and std per-feature parameters."""
import torch
import torch.nn as nn

batch_size = 8192
features = 4000


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.mean = nn.Parameter(torch.randn(features))
        self.std = nn.Parameter(torch.rand(features) + 0.5)

    def forward(self, x):
        return (x - self.mean) / self.std


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]


def get_input_variants():
    # The last dim is fixed by the statistics; the leading dims vary.
    return [[torch.randn(1, features)], [torch.randn(37, features) * 3], [torch.randn(2, 7, features)]]
