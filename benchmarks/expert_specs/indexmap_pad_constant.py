"""A constant pad of the last two dims (a masked load and the fill value), then a sigmoid."""
import torch
import torch.nn as nn
import torch.nn.functional as F

OPFORGE = dict(name="indexmap_pad_constant", dtypes=["float32"], tags=["indexmap", "pad", "sigmoid"], family="indexmap")

batch_size = 16
channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sigmoid(F.pad(x, (2, 3, 1, 1), value=0.5))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 3, 5, 7)], [torch.randn(1, 1, 1, 1)]]
