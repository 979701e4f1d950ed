"""Conv3d, BatchNorm3d at inference, sigmoid, then the mean over the volume: [B, C]."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv3d", "batch_norm", "sigmoid", "mean", "reduction", "fused", "inference"])

batch_size = 16
in_channels = 8
out_channels = 32
depth = 24
height = 24
width = 24
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, bias=False)
        self.bn = nn.BatchNorm3d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.normal_(0, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.normal_(1, 0.3)
            self.bn.bias.normal_(0, 0.3)

    def forward(self, x):
        return torch.sigmoid(self.bn(self.conv(x))).mean(dim=[2, 3, 4])


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(2, in_channels, 3, 3, 3)], [torch.randn(3, in_channels, 4, 11, 6)]]
