"""1-D convolution with stride 2, dilation 3 and padding 4, no bias."""
import torch
import torch.nn as nn

OPFORGE = dict(name="42_conv1d_dilated_strided", dtypes=["float32"], tags=["conv", "conv1d", "dilated", "strided"], family="conv")

batch_size = 16
in_channels = 32
out_channels = 64
length = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 5, stride=2, padding=4, dilation=3, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(2, in_channels, 41)], [torch.randn(1, in_channels, 13)]]
