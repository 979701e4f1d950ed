"""Conv2d, BatchNorm2d at inference (trained-looking running statistics), then hardswish."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv2d", "batch_norm", "hardswish", "fused", "inference"])

batch_size = 128
in_channels = 16
out_channels = 32
height = 56
width = 56
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.normal_(0, 0.3)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.normal_(1, 0.3)
            self.bn.bias.normal_(0, 0.3)

    def forward(self, x):
        return torch.nn.functional.hardswish(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    # An odd plane under stride 2, and inputs spread wide enough to reach both hardswish knees.
    return [[torch.randn(1, in_channels, 15, 7)], [torch.randn(4, in_channels, 8, 8) * 6]]
