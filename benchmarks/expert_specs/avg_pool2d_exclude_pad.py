"""2-D average pooling that divides by the window's elements inside the image (count_include_pad=False)."""
import torch
import torch.nn as nn

batch_size = 16
channels = 32
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 4, 21, 18) + 3], [torch.randn(1, 2, 6, 5)]]
