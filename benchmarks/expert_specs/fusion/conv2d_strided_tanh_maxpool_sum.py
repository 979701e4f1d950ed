"""Stride-2 Conv2d, tanh, 2x2 max pooling, then the sum over channels kept as a 1-channel map."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "strided", "tanh", "max_pool", "sum", "fused"])

batch_size = 128
in_channels = 3
out_channels = 32
height = 64
width = 64
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=2, padding=1)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.tanh(self.conv(x)), 2)
        return x.sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 4, 4)], [torch.randn(2, in_channels, 23, 10)]]
