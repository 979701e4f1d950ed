"""The sum of every element (KernelBench format, module-level sizes): one scalar out of many cores."""
import torch

batch_size = 32
dim = 4000


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
