"""Add a learned bias row (a parameter of the last dim's size) to every row."""
import torch

OPFORGE = dict(name="bias_add_row", dtypes=["float32"], tags=["elementwise", "broadcast", "bias", "parameter"], family="elementwise")

batch_size = 4096
dim = 5120


class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.randn(dim))

    def forward(self, x):
        return x + self.bias


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]


def get_input_variants():
    # The last dim is fixed by the bias, so the variants change the leading dims: one row, a ragged count, 3-D.
    return [[torch.randn(1, dim)], [torch.randn(19, dim)], [torch.randn(3, 5, dim)]]
