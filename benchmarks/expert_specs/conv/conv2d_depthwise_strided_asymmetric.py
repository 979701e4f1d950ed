"""Depthwise 2-D convolution, 3x5 kernel, stride 2, no bias."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv2d_depthwise_strided_asymmetric", dtypes=["float32"], tags=["conv", "conv2d", "depthwise", "strided"], family="conv")

batch_size = 16
channels = 32
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, (3, 5), stride=2, padding=(1, 2), groups=channels, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(2, channels, 9, 30)]]
