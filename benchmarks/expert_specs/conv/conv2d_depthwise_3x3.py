"""Depthwise 2-D convolution, 3x3, padding 1 (one filter per channel)."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv2d_depthwise_3x3", dtypes=["float32"], tags=["conv", "conv2d", "depthwise"], family="conv")

batch_size = 16
channels = 64
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, channels, 17, 10)]]
