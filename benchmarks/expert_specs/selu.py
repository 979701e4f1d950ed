"""SELU (fixed alpha and scale) over a 2-D tensor."""
import torch

OPFORGE = dict(name="selu", dtypes=["float32"], tags=["activation", "elementwise", "selu", "exp"], family="activation")

batch_size = 2048
dim = 32768


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.selu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(11, 2999) * 4], [torch.randn(3, 1, 4097)], [torch.randn(333, 5)]]
