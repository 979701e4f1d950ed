"""Standard 2-D convolution, square 3x3 kernel, square input."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv_standard_2d_square", dtypes=["float32"], tags=["conv", "conv2d"], family="conv")

batch_size = 16
in_channels = 3
out_channels = 64
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(3, in_channels, 19, 23)], [torch.randn(1, in_channels, 3, 3)]]
