"""2-D convolution, 5x3 kernel, stride (2, 3), padding (2, 1)."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv2d_asymmetric_stride", dtypes=["float32"], tags=["conv", "conv2d", "strided", "asymmetric"], family="conv")

batch_size = 16
in_channels = 16
out_channels = 32
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, (5, 3), stride=(2, 3), padding=(2, 1))

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(3, in_channels, 21, 26)], [torch.randn(1, in_channels, 2, 2)]]
