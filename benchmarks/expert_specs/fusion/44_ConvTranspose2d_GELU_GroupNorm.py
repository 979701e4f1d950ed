"""ConvTranspose2d, exact GELU, then GroupNorm with a learned affine map."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv_transpose2d", "gelu", "group_norm", "fused"])

batch_size = 32
in_channels = 32
out_channels = 64
groups = 8
height = 32
width = 32
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=1)
        self.norm = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0, 0.2)

    def forward(self, x):
        return self.norm(torch.nn.functional.gelu(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]


def get_input_variants():
    return [[torch.randn(1, in_channels, 1, 1)], [torch.randn(2, in_channels, 11, 6) * 3]]
