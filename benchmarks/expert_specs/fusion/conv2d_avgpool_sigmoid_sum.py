"""Conv2d, 2x2 average pooling, sigmoid, then the sum over channels and plane: one number per sample."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "avg_pool", "sigmoid", "sum", "reduction", "fused"])

batch_size = 128
in_channels = 8
out_channels = 16
height = 32
width = 32
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = torch.sigmoid(torch.nn.functional.avg_pool2d(self.conv(x), 2))
        return x.sum(dim=[1, 2, 3])


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 4, 4)], [torch.randn(5, in_channels, 27, 14)]]
