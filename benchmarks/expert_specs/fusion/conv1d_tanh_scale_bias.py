"""Strided Conv1d, tanh, a learned per-channel scale, then a learned per-channel bias."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv1d", "tanh", "scale", "bias", "fused"])

batch_size = 64
in_channels = 64
out_channels = 64
length = 2048
kernel_size = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=2)
        self.scale = nn.Parameter(torch.randn(out_channels, 1))
        self.bias = nn.Parameter(torch.randn(out_channels, 1) * 0.1)

    def forward(self, x):
        return torch.tanh(self.conv(x)) * self.scale + self.bias


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 4)], [torch.randn(3, in_channels, 95)]]
