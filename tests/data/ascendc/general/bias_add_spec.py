"""A bias row broadcast over the rows of a matrix (KernelBench format, module-level sizes)."""
import torch

batch_size = 48
dim = 2000


class Model(torch.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return x + self.bias


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
