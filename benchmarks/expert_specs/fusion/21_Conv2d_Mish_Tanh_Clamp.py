"""Conv2d, Mish, tanh, then a clamp to [-0.6, 0.6]."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "mish", "tanh", "clamp", "fused"])

batch_size = 128
in_channels = 3
out_channels = 32
height = 48
width = 48
kernel_size = 5


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, low=-0.6, high=0.6):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.low, self.high = low, high

    def forward(self, x):
        x = torch.tanh(torch.nn.functional.mish(self.conv(x)))
        return torch.clamp(x, self.low, self.high)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    # The smallest plane the 5x5 kernel accepts, and large inputs that saturate the clamp.
    return [[torch.randn(2, in_channels, 5, 5)], [torch.randn(3, in_channels, 21, 12) * 8]]
