"""Conv3d, hardswish, 2x2x2 max pooling, then a clamp to [0, 1]."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv3d", "hardswish", "max_pool", "clamp", "fused"])

batch_size = 16
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        x = torch.nn.functional.max_pool3d(torch.nn.functional.hardswish(self.conv(x)), 2)
        return torch.clamp(x, 0.0, 1.0)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 2, 3, 2)], [torch.randn(2, in_channels, 9, 5, 8) * 4]]
