"""A reflection pad of an image batch (coordinates mirrored at the borders), then a scale."""
import torch
import torch.nn as nn
import torch.nn.functional as F

OPFORGE = dict(name="indexmap_reflect_pad2d", dtypes=["float32"], tags=["indexmap", "pad", "reflect"], family="indexmap")

batch_size = 16
channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.pad(x, (3, 3, 2, 2), mode="reflect") * 0.5


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 3, 5, 7)], [torch.randn(1, 2, 3, 4)]]
