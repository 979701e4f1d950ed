"""GELU with the tanh approximation (GPT-2 style)."""
import torch

OPFORGE = dict(name="fast_gelu", dtypes=["float32"], tags=["activation", "elementwise", "gelu", "tanh"], family="activation")

batch_size = 4096
dim = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # Large magnitudes push tanh into saturation; the others are ragged shapes.
    return [[torch.randn(17, 3333) * 8], [torch.randn(5, 7, 999)], [torch.randn(1, 12289)]]
