"""Masked cumulative sum: cumsum(x * mask, dim) with a boolean mask input of the same shape."""
import torch
import torch.nn as nn

batch_size = 8192
length = 16384
scan_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, length), torch.randint(0, 2, (batch_size, length)).bool()]


def get_init_inputs():
    return [scan_dim]


def get_input_variants():
    return [
        [torch.randn(7, 3001), torch.randint(0, 2, (7, 3001)).bool()],
        [torch.randn(129, 3), torch.zeros(129, 3, dtype=torch.bool)],  # nothing selected: all zeros out
        [torch.randn(3, 211, 9), torch.rand(3, 211, 9) < 0.9],
    ]
