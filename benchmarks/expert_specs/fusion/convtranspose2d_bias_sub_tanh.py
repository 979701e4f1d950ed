"""Stride-2 ConvTranspose2d (upsampling), a learned per-channel bias subtracted, then tanh."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv_transpose2d", "bias", "tanh", "upsample", "fused"])

batch_size = 64
in_channels = 32
out_channels = 16
height = 32
width = 32
kernel_size = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=2, padding=1)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.3)

    def forward(self, x):
        return torch.tanh(self.deconv(x) - self.bias)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 1, 1)], [torch.randn(3, in_channels, 7, 12)]]
