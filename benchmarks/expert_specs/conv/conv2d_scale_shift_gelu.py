"""2-D convolution, a per-channel scale and shift, then GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

OPFORGE = dict(name="conv2d_scale_shift_gelu", dtypes=["float32"], tags=["conv", "conv2d", "epilogue", "activation"], family="conv")

batch_size = 16
in_channels = 16
out_channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, bias=False)
        self.scale = nn.Parameter(torch.randn(out_channels, 1, 1))
        self.shift = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x):
        return F.gelu(self.conv(x) * self.scale + self.shift)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(2, in_channels, 9, 17)]]
