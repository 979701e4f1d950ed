"""Min values over one dim of a 3-D tensor, the dim passed to the constructor."""
import torch

OPFORGE = dict(name="min_dim", dtypes=["float32"], tags=["reduction", "min", "strided"], family="reduction")

batch_size = 128
dim1 = 1024
dim2 = 1023
reduce_dim = 1


class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.min(x, dim=self.dim)[0]


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]


def get_input_variants():
    # All-positive values: a padding of 0 must not win.
    return [[torch.randn(6, 55, 203)], [torch.rand(2, 999, 13) + 1], [torch.randn(9, 7, 1111)]]
