"""3x3 convolution keeping the shape, plus a residual tensor, then SiLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

OPFORGE = dict(name="conv2d_residual_add", dtypes=["float32"], tags=["conv", "conv2d", "residual"], family="conv")

batch_size = 16
channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, residual):
        return F.silu(self.conv(x) + residual)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width), torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, channels, 11, 9), torch.randn(3, channels, 11, 9)]]
