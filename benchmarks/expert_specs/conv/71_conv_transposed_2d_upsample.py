"""Transposed 2-D convolution upsampling by 2: kernel 4, stride 2, padding 1."""
import torch
import torch.nn as nn

OPFORGE = dict(name="71_conv_transposed_2d_upsample", dtypes=["float32"], tags=["conv", "conv2d", "transposed", "strided"], family="conv")

batch_size = 16
in_channels = 32
out_channels = 16
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(3, in_channels, 5, 9)], [torch.randn(1, in_channels, 1, 1)]]
