"""2-D convolution of a non-square input, 3x3 kernel, padding 1."""
import torch
import torch.nn as nn

OPFORGE = dict(name="63_conv_standard_2d_asymmetric_input", dtypes=["float32"], tags=["conv", "conv2d", "non-square"], family="conv")

batch_size = 16
in_channels = 16
out_channels = 32
height = 128
width = 320


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(2, in_channels, 11, 37)], [torch.randn(1, in_channels, 1, 5)]]
