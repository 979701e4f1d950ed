"""Same-padded Conv2d, InstanceNorm2d, LeakyReLU(0.2), then the block's input added back."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "instance_norm", "leaky_relu", "residual", "fused"])

batch_size = 32
channels = 64
height = 64
width = 64
kernel_size = 3


class Model(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2)
        self.norm = nn.InstanceNorm2d(channels, affine=True)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0, 0.2)

    def forward(self, x):
        return torch.nn.functional.leaky_relu(self.norm(self.conv(x)), 0.2) + x


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]


def get_input_variants():
    # A plane of two pixels per row (the statistics of very few values), and a ragged one.
    return [[torch.randn(1, channels, 3, 2)], [torch.randn(2, channels, 19, 33) * 3 - 1]]
