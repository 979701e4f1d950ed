"""Hardsigmoid: relu6(x + 3) / 6."""
import torch

OPFORGE = dict(name="hardsigmoid", dtypes=["float32"], tags=["activation", "elementwise", "hardsigmoid", "clamp"], family="activation")

batch_size = 4096
dim = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.hardsigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(27, 3037) * 5], [torch.randn(2, 9, 777)], [torch.randn(199, 11)]]
