"""Conv2d, GroupNorm over channel groups, SiLU, then a learned per-channel scale."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "group_norm", "silu", "scale", "fused"])

batch_size = 64
in_channels = 8
out_channels = 64
groups = 8
height = 64
width = 64
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0, 0.2)
        self.scale = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x):
        return torch.nn.functional.silu(self.norm(self.conv(x))) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]


def get_input_variants():
    # A large offset on the input (the norm must remove it), and a 1x1 plane (padding only).
    return [[torch.randn(2, in_channels, 17, 23) * 4 + 50], [torch.randn(3, in_channels, 1, 1)]]
