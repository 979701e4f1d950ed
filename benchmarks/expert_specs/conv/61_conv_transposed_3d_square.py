"""Transposed 3-D convolution, 3x3x3 kernel, cubic volume."""
import torch
import torch.nn as nn

OPFORGE = dict(name="61_conv_transposed_3d_square", dtypes=["float32"], tags=["conv", "conv3d", "transposed"], family="conv")

batch_size = 8
in_channels = 16
out_channels = 8
depth = 32
height = 32
width = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, 3)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(2, in_channels, 3, 5, 4)], [torch.randn(1, in_channels, 1, 1, 1)]]
