"""Transposed 1-D convolution with dilation 2 and stride 3, no bias."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv_transposed_1d_dilated", dtypes=["float32"], tags=["conv", "conv1d", "transposed", "dilated"], family="conv")

batch_size = 16
in_channels = 32
out_channels = 32
length = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, 3, stride=3, padding=2, dilation=2, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(2, in_channels, 31)]]
