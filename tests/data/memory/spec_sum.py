"""The sum of a vector, tiny sizes: kernels that combine the programs' partial sums."""
import torch

OPFORGE = dict(name="tiny_vector_sum", tags=["reduction"])

n = 300


class Model(torch.nn.Module):
    def forward(self, x):
        return x.sum(0, keepdim=True)


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(77)]]
