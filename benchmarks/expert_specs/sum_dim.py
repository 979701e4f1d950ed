"""Sum over one dim of a 3-D tensor (keepdim), the dim passed to the constructor."""
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
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]


def get_input_variants():
    return [[torch.randn(3, 37, 129)], [torch.randn(5, 211, 17)], [torch.randn(1, 9, 1001)]]
