"""Grouped transposed 3-D convolution (2 groups), plus a learned per-channel offset."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv_transposed_3d_grouped_bias_add", dtypes=["float32"], tags=["conv", "conv3d", "transposed", "grouped", "epilogue"], family="conv")

batch_size = 8
in_channels = 16
out_channels = 16
depth = 16
height = 32
width = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, (3, 3, 2), stride=(1, 2, 2), groups=2)
        self.offset = nn.Parameter(torch.randn(out_channels, 1, 1, 1))

    def forward(self, x):
        return self.conv(x) + self.offset


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(2, in_channels, 3, 5, 4)]]
