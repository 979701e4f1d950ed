"""Frobenius normalisation: the whole tensor divided by its Frobenius norm (a global reduction)."""
import torch

OPFORGE = dict(name="frobenius_norm", dtypes=["float32"], tags=["reduction", "norm", "global", "divide"], family="reduction")

batch_size = 16
features = 64
dim1 = 256
dim2 = 256


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        norm = torch.norm(x, p="fro")
        return x / norm


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return []


def get_input_variants():
    # Sizes that do not fill a block evenly, so partial sums must mask their tails.
    return [[torch.randn(3, 7, 33, 65)], [torch.randn(1, 1, 1, 1001)], [torch.randn(2, 5, 129, 131)]]
