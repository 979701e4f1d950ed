"""Running maximum along dim 1 with the index of each maximum (ties: the later column, as torch)."""
import torch

OPFORGE = dict(name="cummax_dim1", dtypes=["float32"], tags=["scan", "cummax", "row", "argmax"], family="scan")

batch_size = 4096
length = 8192
scan_dim = 1


class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        values, indices = torch.cummax(x, dim=self.dim)
        return values, indices


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return [scan_dim]


def get_input_variants():
    # rounded values repeat, so ties must go to the later column; a 3-D input scans its middle dim
    return [[torch.randn(7, 3001).round()], [torch.randn(129, 3)], [torch.randn(3, 257, 11)]]
