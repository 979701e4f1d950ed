"""Mean over one dim of a 3-D tensor, the dim passed to the constructor."""
import torch

OPFORGE = dict(name="mean_dim", dtypes=["float32"], tags=["reduction", "mean", "strided"], family="reduction")

batch_size = 128
dim1 = 1024
dim2 = 1023
reduce_dim = 1


class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.mean(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]


def get_input_variants():
    return [[torch.randn(2, 333, 77)], [torch.randn(7, 3, 1999)], [torch.randn(1, 1025, 5)]]
