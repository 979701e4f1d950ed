"""3-D average pooling of a volume, non-overlapping 2x2x2 windows."""
import torch
import torch.nn as nn

batch_size = 8
channels = 16
depth = 64
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Odd sizes: the trailing plane that fits no window is dropped, as in torch.
    return [[torch.randn(2, 3, 9, 10, 11)]]
