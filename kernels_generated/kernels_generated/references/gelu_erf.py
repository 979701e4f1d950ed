"""Exact GELU: 0.5*x*(1 + erf(x/sqrt(2)))."""
import torch

OPFORGE = dict(name="gelu_erf", dtypes=["float32"], tags=["elementwise", "activation", "gelu"], family="activation")

batch_size = 4096
dim = 4096


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes that do not fill a block, plus a 3-D input; scaled randn reaches the saturated tails.
    return [[torch.randn(1, 1000)], [torch.randn(7, 4097) * 8], [torch.randn(3, 5, 333) * 30]]
