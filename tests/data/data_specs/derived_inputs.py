"""Inputs shaped by values derived from the size constants (`cols = 2 * width`, a shape tuple):
the stress stage's larger hidden shape must grow them with the constants."""
import torch

OPFORGE = dict(name="derived_inputs", tags=["elementwise"])

batch_size = 64
width = 32
cols = 2 * width
shape = (batch_size, cols)


class Model(torch.nn.Module):
    def forward(self, x, w):
        return x * w


def get_inputs():
    return [torch.randn(*shape), torch.randn(cols)]


def get_init_inputs():
    return []
