"""Transposed 2-D convolution: 4 groups, stride 2, padding 2, dilation 2, output padding 1."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv_transposed_2d_grouped_dilated", dtypes=["float32"], tags=["conv", "conv2d", "transposed", "grouped", "dilated"], family="conv")

batch_size = 16
in_channels = 32
out_channels = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, 3, stride=2, padding=2, output_padding=1, groups=4, dilation=2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(2, in_channels, 9, 6)]]
