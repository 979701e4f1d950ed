"""Conv3d over a volume, ReLU, then GroupNorm over channel groups."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv3d", "relu", "group_norm", "fused"])

batch_size = 16
in_channels = 3
out_channels = 32
groups = 4
depth = 24
height = 32
width = 32
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0, 0.2)

    def forward(self, x):
        return self.norm(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]


def get_input_variants():
    return [[torch.randn(1, in_channels, 3, 4, 5)], [torch.randn(2, in_channels, 7, 9, 6) + 2]]
