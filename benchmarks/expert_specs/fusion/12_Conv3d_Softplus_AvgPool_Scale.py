"""Conv3d, softplus, 2x2x2 average pooling, then multiplication by a constant factor."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv3d", "softplus", "avg_pool", "scale", "fused"])

batch_size = 16
in_channels = 4
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, factor=0.25):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)
        self.factor = factor

    def forward(self, x):
        x = torch.nn.functional.softplus(self.conv(x))
        return torch.nn.functional.avg_pool3d(x, 2) * self.factor


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    # Large inputs (softplus past its threshold is the identity), and odd extents.
    return [[torch.randn(1, in_channels, 2, 2, 2) * 30], [torch.randn(2, in_channels, 5, 7, 9)]]
