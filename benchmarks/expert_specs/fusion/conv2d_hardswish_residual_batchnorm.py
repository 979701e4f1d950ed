"""Pointwise (1x1) Conv2d, hardswish, the input added back, then BatchNorm2d at inference."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "pointwise", "hardswish", "residual", "batch_norm", "fused"])

batch_size = 64
channels = 64
height = 32
width = 32


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 1)
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.normal_(0, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.normal_(1, 0.3)
            self.bn.bias.normal_(0, 0.3)

    def forward(self, x):
        return self.bn(torch.nn.functional.hardswish(self.conv(x)) + x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


def get_input_variants():
    return [[torch.randn(2, channels, 1, 1)], [torch.randn(3, channels, 7, 19)]]
