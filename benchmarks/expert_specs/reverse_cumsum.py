"""Reverse (suffix) cumulative sum along a dim: cumsum(x.flip(dim), dim).flip(dim)."""
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
        return torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return [scan_dim]


def get_input_variants():
    return [[torch.randn(9, 3333)], [torch.randn(1, 2)], [torch.randn(4, 301, 7)]]
