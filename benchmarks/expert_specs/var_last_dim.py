"""Unbiased variance over the last dim of a 2-D tensor."""
import torch

OPFORGE = dict(name="var_last_dim", dtypes=["float32"], tags=["reduction", "variance", "row", "two-pass"], family="reduction")

batch_size = 4096
dim = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.var(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # A large common offset punishes the one-pass E[x^2] - E[x]^2 formula.
    return [[torch.randn(7, 4097) + 100.0], [torch.randn(3, 5, 333)], [torch.randn(129, 3) * 5]]
