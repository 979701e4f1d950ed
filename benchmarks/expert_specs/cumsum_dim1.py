"""Inclusive cumulative sum along a dim passed to the constructor, of a [batch, length] tensor."""
import torch
import torch.nn as nn

batch_size = 8192
length = 16384
scan_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return [scan_dim]


def get_input_variants():
    # A 3-D input scans its middle dim (a strided scan).
    return [[torch.randn(7, 4001)], [torch.randn(129, 3)], [torch.randn(3, 257, 11)]]
