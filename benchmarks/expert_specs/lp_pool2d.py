"""LPPool2d (p = 2): the root of the sum of squares over each window."""
import torch
import torch.nn as nn

batch_size = 16
channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.LPPool2d(2, kernel_size=3, stride=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 3, 17, 12)], [torch.randn(1, 2, 3, 3) * 100]]
