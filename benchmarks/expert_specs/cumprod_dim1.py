"""Cumulative product along dim 1 of values near 1 (so long products stay representable)."""
import torch

OPFORGE = dict(name="cumprod_dim1", dtypes=["float32"], tags=["scan", "cumprod", "row"], family="scan")

batch_size = 8192
length = 8192
scan_dim = 1


class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumprod(x, dim=self.dim)


def get_inputs():
    return [1 + 0.01 * torch.randn(batch_size, length)]


def get_init_inputs():
    return [scan_dim]


def get_input_variants():
    return [[1 + 0.01 * torch.randn(11, 3001)], [torch.rand(257, 5) + 0.5], [1 + 0.02 * torch.randn(2, 999, 3)]]
