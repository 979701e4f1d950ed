"""Exact (erf) GELU, tiny sizes: a tanh approximation must not pass as it."""
import torch

OPFORGE = dict(name="tiny_gelu", tags=["activation"])

batch_size = 32
dim = 64


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 2]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 17) * 2]]
