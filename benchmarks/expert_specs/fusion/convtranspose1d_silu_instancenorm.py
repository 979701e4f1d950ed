"""Stride-2 ConvTranspose1d, SiLU, then InstanceNorm1d (per sample and channel, no affine map)."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv_transpose1d", "silu", "instance_norm", "fused"])

batch_size = 64
in_channels = 64
out_channels = 32
length = 512
kernel_size = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.deconv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=2, padding=1)
        self.norm = nn.InstanceNorm1d(out_channels)

    def forward(self, x):
        return self.norm(torch.nn.functional.silu(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 1)], [torch.randn(3, in_channels, 45) * 2 + 5]]
