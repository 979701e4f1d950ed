"""Grouped 3-D convolution (2 groups), padding 1, then LeakyReLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

OPFORGE = dict(name="conv3d_grouped_leaky_relu", dtypes=["float32"], tags=["conv", "conv3d", "grouped", "activation"], family="conv")

batch_size = 8
in_channels = 16
out_channels = 32
depth = 32
height = 32
width = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1, groups=2)

    def forward(self, x):
        return F.leaky_relu(self.conv(x), 0.1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(2, in_channels, 3, 7, 5)]]
