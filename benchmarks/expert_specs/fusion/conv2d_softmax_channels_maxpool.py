"""Conv2d, softmax over the channel dim at every pixel, then 2x2 max pooling of the probabilities."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "softmax", "max_pool", "fused"])

batch_size = 64
in_channels = 16
out_channels = 32
height = 64
width = 64
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        return torch.nn.functional.max_pool2d(torch.softmax(self.conv(x), dim=1), 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    # Large logits (a softmax that does not subtract the max overflows), and an odd plane.
    return [[torch.randn(2, in_channels, 6, 6) * 40], [torch.randn(3, in_channels, 13, 20)]]
