"""ConvTranspose3d, sigmoid, the sum over channels (kept), then a learned scalar scale."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv_transpose3d", "sigmoid", "sum", "scale", "reduction", "fused"])

batch_size = 16
in_channels = 16
out_channels = 32
depth = 8
height = 16
width = 16
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=2, padding=1)
        self.scale = nn.Parameter(torch.tensor(0.125))

    def forward(self, x):
        return torch.sigmoid(self.deconv(x)).sum(dim=1, keepdim=True) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 1, 1, 1)], [torch.randn(2, in_channels, 3, 5, 4)]]
