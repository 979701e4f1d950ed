"""Product over one dim of a 3-D tensor of values in [0.5, 1.5), the dim passed to the constructor."""
import torch
import torch.nn as nn

batch_size = 128
dim1 = 256
dim2 = 4095
reduce_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.prod(x, dim=self.dim)


def get_inputs():
    return [torch.rand(batch_size, dim1, dim2) + 0.5]


def get_init_inputs():
    return [reduce_dim]


def get_input_variants():
    # Values near 1 keep the products representable; a few exact zeros and negative factors too.
    signed = (torch.rand(4, 45, 301) + 0.5) * torch.where(torch.rand(4, 45, 301) < 0.1, -1.0, 1.0)
    return [[torch.rand(3, 77, 131) + 0.5], [signed], [torch.where(torch.rand(2, 9, 1001) < 0.02, 0.0, 1.0)]]
