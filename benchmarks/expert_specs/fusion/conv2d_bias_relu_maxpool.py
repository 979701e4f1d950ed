"""Bias-free Conv2d, a separate per-channel bias, ReLU, then 2x2 max pooling."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "bias", "relu", "max_pool", "fused"])

batch_size = 128
in_channels = 3
out_channels = 64
height = 64
width = 64
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)

    def forward(self, x):
        x = torch.relu(self.conv(x) + self.bias)
        return torch.nn.functional.max_pool2d(x, 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    # One image, and an odd plane that the pooling window does not tile (the last row is dropped).
    return [[torch.randn(1, in_channels, 9, 9)], [torch.randn(3, in_channels, 32, 19)]]
