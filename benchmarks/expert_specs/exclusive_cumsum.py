"""Exclusive cumulative sum along dim 1: cumsum(x, dim) - x (each position sums what precedes it)."""
import torch

OPFORGE = dict(name="exclusive_cumsum", dtypes=["float32"], tags=["scan", "cumsum", "exclusive", "row"], family="scan")

batch_size = 8192
length = 16384
scan_dim = 1


class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim) - x


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return [scan_dim]


def get_input_variants():
    return [[torch.randn(13, 2049)], [torch.randn(300, 1)], [torch.randn(2, 77, 5)]]
