"""Logistic sigmoid over a 2-D tensor."""
import torch

OPFORGE = dict(name="sigmoid", dtypes=["float32"], tags=["activation", "elementwise", "sigmoid", "exp"], family="activation")

batch_size = 4096
dim = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # Large magnitudes: exp(-x) overflows for very negative x if computed naively.
    return [[torch.randn(41, 2003) * 50], [torch.randn(1, 4097)], [torch.randn(2, 3, 5, 707)]]
