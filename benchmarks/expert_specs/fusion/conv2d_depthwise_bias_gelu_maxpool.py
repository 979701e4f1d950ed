"""Depthwise Conv2d (one filter per channel), a learned bias, tanh-approximated GELU, then 3x3/2 max pooling."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "depthwise", "bias", "gelu", "max_pool", "fused"])

batch_size = 32
channels = 64
height = 64
width = 64
kernel_size = 5


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=2, groups=channels, bias=False)
        self.bias = nn.Parameter(torch.randn(channels, 1, 1) * 0.5)

    def forward(self, x):
        x = torch.nn.functional.gelu(self.conv(x) + self.bias, approximate="tanh")
        return torch.nn.functional.max_pool2d(x, kernel_size=3, stride=2)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, channels, 3, 3)], [torch.randn(2, channels, 22, 15)]]
