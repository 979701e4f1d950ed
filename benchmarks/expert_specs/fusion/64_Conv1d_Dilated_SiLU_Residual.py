"""Dilated same-length Conv1d, SiLU, a learned scalar gate, then the input added back."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv1d", "dilated", "silu", "scale", "residual", "fused"])

batch_size = 32
channels = 64
length = 2048
kernel_size = 3
dilation = 4


class Model(nn.Module):
    def __init__(self, channels, kernel_size, dilation):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, padding=dilation * (kernel_size - 1) // 2,
                              dilation=dilation)
        self.gate = nn.Parameter(torch.tensor(0.7))

    def forward(self, x):
        return x + self.gate * torch.nn.functional.silu(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels, kernel_size, dilation]


def get_input_variants():
    # A sequence shorter than the dilated receptive field (all taps but the centre hit padding).
    return [[torch.randn(2, channels, 3)], [torch.randn(3, channels, 129)]]
