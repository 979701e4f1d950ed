"""Transposed 2-D convolution, 3x3, stride 1."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv_transposed_2d_square", dtypes=["float32"], tags=["conv", "conv2d", "transposed"], family="conv")

batch_size = 16
in_channels = 32
out_channels = 16
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, 3)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, in_channels, 7, 12)]]
