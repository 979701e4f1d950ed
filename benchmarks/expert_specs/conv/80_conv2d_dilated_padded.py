"""2-D convolution with dilation (2, 3) and padding (2, 3), no bias."""
import torch
import torch.nn as nn

OPFORGE = dict(name="80_conv2d_dilated_padded", dtypes=["float32"], tags=["conv", "conv2d", "dilated"], family="conv")

batch_size = 16
in_channels = 16
out_channels = 32
height = 128
width = 192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=(2, 3), dilation=(2, 3), bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(2, in_channels, 13, 29)]]
