"""2-D convolution, stride 2, clamped to [-1, 1] (ReLU6-like bounds)."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv2d_hardtanh_clamp", dtypes=["float32"], tags=["conv", "conv2d", "clamp"], family="conv")

batch_size = 16
in_channels = 16
out_channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=2)

    def forward(self, x):
        return torch.clamp(self.conv(x), min=-1.0, max=1.0)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, in_channels, 12, 21)]]
