"""Depthwise 1-D convolution, kernel 7, 'same'-style padding 3."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv1d_depthwise", dtypes=["float32"], tags=["conv", "conv1d", "depthwise"], family="conv")

batch_size = 16
channels = 64
length = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 7, padding=3, groups=channels)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, channels, 45)]]
