"""Mish: x * tanh(softplus(x))."""
import torch

OPFORGE = dict(name="mish", dtypes=["float32"], tags=["activation", "elementwise", "mish", "softplus", "tanh"], family="activation")

batch_size = 4096
dim = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.mish(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # Large magnitudes exercise the softplus overflow guard.
    return [[torch.randn(23, 1999) * 30], [torch.randn(1, 3, 5)], [torch.randn(6, 7, 2111)]]
