"""Max values over one dim of a 3-D tensor, the dim passed to the constructor."""
import torch
import torch.nn as nn

batch_size = 128
dim1 = 1024
dim2 = 1023
reduce_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.max(x, dim=self.dim)[0]


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]


def get_input_variants():
    # All-negative values: a padding of 0 must not win.
    return [[torch.randn(4, 101, 97)], [-torch.rand(3, 19, 301) - 1], [torch.randn(1, 2049, 3)]]
