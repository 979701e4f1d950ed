"""Pointwise 1x1x1 3-D convolution."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv3d_pointwise", dtypes=["float32"], tags=["conv", "conv3d", "pointwise"], family="conv")

batch_size = 8
in_channels = 32
out_channels = 64
depth = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, in_channels, 3, 5, 7)]]
