"""The inclusive prefix sum of a vector, tiny sizes: kernels that carry a block's total to the next."""
import torch

OPFORGE = dict(name="tiny_vector_cumsum", tags=["scan"])

n = 300


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, 0)


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(77)]]
