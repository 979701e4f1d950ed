"""ReLU (KernelBench format, module-level sizes)."""
import torch

batch_size = 16
dim = 8192


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
