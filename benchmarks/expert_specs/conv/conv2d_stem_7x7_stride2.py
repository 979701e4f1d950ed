"""A ResNet-style stem: 7x7 convolution, stride 2, padding 3, no bias."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv2d_stem_7x7_stride2", dtypes=["float32"], tags=["conv", "conv2d", "strided"], family="conv")

batch_size = 16
in_channels = 3
out_channels = 64
height = 224
width = 224


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 7, stride=2, padding=3, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(2, in_channels, 23, 31)], [torch.randn(1, in_channels, 1, 1)]]
