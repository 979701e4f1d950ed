"""A flip along one dim plus a roll along another of the same input: two index maps in one chain."""
import torch
import torch.nn as nn

OPFORGE = dict(name="indexmap_flip_roll", dtypes=["float32"], tags=["indexmap", "flip", "roll"], family="indexmap")

batch_size = 64
rows = 128
cols = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.flip(x, [1]) - torch.roll(x, shifts=3, dims=-1)


def get_inputs():
    return [torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 5, 7)], [torch.randn(1, 1, 2)]]
