"""Inverse error function (a normal quantile up to a scale): inputs in (-1, 1), crowding the ends."""
import torch

OPFORGE = dict(name="erfinv", dtypes=["float32"], tags=["elementwise", "erfinv", "special"], family="elementwise")

batch_size = 4096
dim = 8192


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, p):
        return torch.erfinv(p) * 1.4142135623730951


def get_inputs():
    return [torch.rand(batch_size, dim) * 2 - 1]


def get_init_inputs():
    return []


def get_input_variants():
    # tanh of a wide normal puts many values within 1e-6 of +-1 (the tail branch)
    return [[torch.tanh(torch.randn(13, 3001) * 4)], [torch.rand(2, 7, 129) * 1.98 - 0.99]]
