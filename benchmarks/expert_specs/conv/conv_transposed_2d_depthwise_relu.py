"""Depthwise transposed 2-D convolution, stride 2, then ReLU."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv_transposed_2d_depthwise_relu", dtypes=["float32"], tags=["conv", "conv2d", "transposed", "depthwise", "activation"], family="conv")

batch_size = 16
channels = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(channels, channels, 3, stride=2, padding=1, groups=channels)

    def forward(self, x):
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, channels, 7, 4)]]
