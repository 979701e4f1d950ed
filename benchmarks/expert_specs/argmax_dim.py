"""Argmax (int64) over one dim of a 3-D tensor, the dim passed to the constructor."""
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
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]


def get_input_variants():
    # Integer-valued floats give many ties: the first index must win.
    return [[torch.randn(3, 67, 211)], [torch.randint(0, 3, (5, 41, 77)).to(torch.float32)], [torch.randn(1, 3001, 7)]]
