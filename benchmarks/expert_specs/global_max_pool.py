"""Global max pooling: adaptive max pooling of each feature map to a single value."""
import torch
import torch.nn as nn

batch_size = 32
channels = 256
height = 32
width = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveMaxPool2d(1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[-torch.rand(2, 7, 5, 9) - 1], [torch.randn(1, 3, 1, 1)]]
