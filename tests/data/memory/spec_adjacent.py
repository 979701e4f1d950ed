"""Each element plus its right neighbour (the last one alone), tiny sizes: in-place stencils."""
import torch

OPFORGE = dict(name="tiny_adjacent_sum", tags=["elementwise"])

n = 300


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.cat([x[:-1] + x[1:], x[-1:]])


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(77)]]
