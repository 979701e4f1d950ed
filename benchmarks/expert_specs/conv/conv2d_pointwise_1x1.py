"""Pointwise 1x1 convolution (a per-position channel mix), no bias."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv2d_pointwise_1x1", dtypes=["float32"], tags=["conv", "conv2d", "pointwise"], family="conv")

batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, in_channels, 7, 13)]]
