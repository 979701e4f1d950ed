"""Transposed 1-D convolution, stride 2, padding 1, output padding 1."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv_transposed_1d_strided", dtypes=["float32"], tags=["conv", "conv1d", "transposed"], family="conv")

batch_size = 16
in_channels = 32
out_channels = 16
length = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, 5, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(3, in_channels, 23)], [torch.randn(1, in_channels, 1)]]
