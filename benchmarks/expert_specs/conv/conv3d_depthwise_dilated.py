"""Depthwise 3-D convolution, dilation 2, padding 2, no bias."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv3d_depthwise_dilated", dtypes=["float32"], tags=["conv", "conv3d", "depthwise", "dilated"], family="conv")

batch_size = 8
channels = 16
depth = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(channels, channels, 3, padding=2, dilation=2, groups=channels, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(2, channels, 6, 5, 9)]]
