"""Standard 3-D convolution, 3x3x3 kernel, cubic volume."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv3d_standard_cube", dtypes=["float32"], tags=["conv", "conv3d"], family="conv")

batch_size = 8
in_channels = 3
out_channels = 32
depth = 64
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(2, in_channels, 5, 9, 7)], [torch.randn(1, in_channels, 3, 3, 3)]]
