"""Transposed 3-D convolution, stride 2, padding 1, output padding 1."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv_transposed_3d_strided", dtypes=["float32"], tags=["conv", "conv3d", "transposed", "strided"], family="conv")

batch_size = 8
in_channels = 16
out_channels = 8
depth = 16
height = 32
width = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(2, in_channels, 3, 4, 5)]]
