"""Conv2d, log-sum-exp over channels (kept as a 1-channel map), then ReLU."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "logsumexp", "relu", "reduction", "fused"])

batch_size = 128
in_channels = 3
out_channels = 32
height = 32
width = 32
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.relu(torch.logsumexp(self.conv(x), dim=1, keepdim=True))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    # Inputs large enough that exp overflows without the max shift, and a thin plane.
    return [[torch.randn(2, in_channels, 10, 10) * 60], [torch.randn(4, in_channels, 3, 40)]]
