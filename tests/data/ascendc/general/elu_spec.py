"""ELU (alpha 1.0) (KernelBench format, module-level sizes)."""
import torch

batch_size = 16
dim = 3000


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.elu(x, alpha=1.0)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3]


def get_init_inputs():
    return []
