"""1x1 convolution, sigmoid, then flattened to [batch, features]."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv2d_flatten_sigmoid", dtypes=["float32"], tags=["conv", "conv2d", "pointwise", "view"], family="conv")

batch_size = 16
in_channels = 32
out_channels = 16
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1)

    def forward(self, x):
        return torch.sigmoid(self.conv(x)).flatten(1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, in_channels, 5, 7)]]
