"""A 2-D convolution, GroupNorm, then ReLU: KernelBench level 2's Conv2d + GroupNorm + ReLU.

GroupNorm reduces over a group's channels and positions, which the convolution's output tiles
split, so the expert writes two kernels (the convolution with its bias, then GroupNorm with the
ReLU fused after it) and ModelNew runs them in order."""
import torch

OPFORGE = dict(name="conv_groupnorm_relu", dtypes=["float32"], tags=["conv", "groupnorm", "relu", "program"],
               family="conv")

batch_size = 4
in_channels = 3
out_channels = 16
height = width = 24
kernel_size = 3
groups = 4


class Model(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size)
        self.norm = torch.nn.GroupNorm(groups, out_channels)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]
