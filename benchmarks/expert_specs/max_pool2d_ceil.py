"""2-D max pooling with ceil_mode: the last window of each row and column may hang over the edge."""
import torch
import torch.nn as nn

batch_size = 16
channels = 32
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1, ceil_mode=True)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 3, 33, 20)], [-torch.rand(1, 4, 8, 9) - 1]]
