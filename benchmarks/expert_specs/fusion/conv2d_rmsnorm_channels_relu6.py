"""Conv2d, RMS normalisation over channels at each pixel with a learned gain, then ReLU6 as a clamp."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "rms_norm", "clamp", "relu6", "fused"])

batch_size = 64
in_channels = 16
out_channels = 64
height = 48
width = 48
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, eps=1e-6):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.gain = nn.Parameter(torch.rand(out_channels, 1, 1) * 4 + 1)
        self.eps = eps

    def forward(self, x):
        x = self.conv(x)
        x = x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + self.eps) * self.gain
        return torch.clamp(x, 0.0, 6.0)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 2, 3) * 100], [torch.randn(3, in_channels, 17, 9)]]
