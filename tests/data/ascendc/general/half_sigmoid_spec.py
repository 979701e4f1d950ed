"""Sigmoid on float16 (KernelBench format, module-level sizes)."""
import torch

OPFORGE = dict(name="half_sigmoid", dtypes=["float16"], tags=["elementwise", "activation"], family="activation")

batch_size = 16
dim = 8192


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.float16)]


def get_init_inputs():
    return []
