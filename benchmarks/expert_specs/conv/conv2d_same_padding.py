"""2-D convolution with padding='same', an odd 3x5 kernel and dilation 2."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv2d_same_padding", dtypes=["float32"], tags=["conv", "conv2d", "same"], family="conv")

batch_size = 16
in_channels = 16
out_channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, (3, 5), padding="same", dilation=2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, in_channels, 9, 21)]]
