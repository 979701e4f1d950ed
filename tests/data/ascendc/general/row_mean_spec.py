"""The mean of each row (KernelBench format, module-level sizes)."""
import torch

batch_size = 40
dim = 1000


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.mean(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
