"""3-D max pooling of a volume with stride, padding and dilation."""
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
        self.pool = nn.MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 3, 13, 11, 15)]]
