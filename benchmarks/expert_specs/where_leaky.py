"""Leaky ReLU written with where: where(x > 0, x, 0.01 * x)."""
import torch

OPFORGE = dict(name="where_leaky", dtypes=["float32"], tags=["activation", "elementwise", "where", "select"], family="activation")

batch_size = 4096
dim = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.where(x > 0, x, x * 0.01)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # Exact zeros sit on the branch boundary.
    return [[torch.randn(11, 3333)], [torch.zeros(3, 1025)], [torch.randn(4, 6, 2001)]]
