"""Stride-2 ConvTranspose2d, LeakyReLU(0.1), 2x2 average pooling, then log-sum-exp over channels."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv_transpose2d", "leaky_relu", "avg_pool", "logsumexp", "fused"])

batch_size = 64
in_channels = 16
out_channels = 32
height = 32
width = 32
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=2, padding=1,
                                         output_padding=1)

    def forward(self, x):
        x = torch.nn.functional.leaky_relu(self.deconv(x), 0.1)
        return torch.logsumexp(torch.nn.functional.avg_pool2d(x, 2), dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 1, 2)], [torch.randn(3, in_channels, 9, 13) * 20]]
