"""Depthwise 2-D convolution with channel multiplier 2 (two filters per channel)."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv2d_depthwise_multiplier", dtypes=["float32"], tags=["conv", "conv2d", "depthwise", "grouped"], family="conv")

batch_size = 16
channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(channels, 2 * channels, 3, padding=1, groups=channels)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, channels, 11, 14)]]
