"""Conv2d, exact GELU, adaptive average pooling to 1x1, flattened to [batch, channels]."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "gelu", "adaptive_avg_pool", "global_pool", "fused"])

batch_size = 128
in_channels = 3
out_channels = 64
height = 32
width = 32
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        x = torch.nn.functional.gelu(self.conv(x))
        return torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 1, 1)], [torch.randn(3, in_channels, 31, 45)]]
