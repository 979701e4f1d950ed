"""Transposed 2-D convolution, 3x5 kernel, stride (1, 2), padding (0, 2), no bias."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv_transposed_2d_asymmetric", dtypes=["float32"], tags=["conv", "conv2d", "transposed", "asymmetric"], family="conv")

batch_size = 16
in_channels = 16
out_channels = 32
height = 64
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, (3, 5), stride=(1, 2), padding=(0, 2), bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, in_channels, 5, 11)]]
