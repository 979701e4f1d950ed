"""Level-1 style: argmax over one dimension of a 3-D input (integer indices out)."""
import torch
import torch.nn as nn

batch_size = 16
dim1 = 256
dim2 = 256


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [1]
