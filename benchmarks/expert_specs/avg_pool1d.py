"""1-D average pooling with padding counted in the divisor (the default count_include_pad)."""
import torch
import torch.nn as nn

batch_size = 32
channels = 64
length = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=5, stride=3, padding=2)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 4, 50) + 5], [torch.randn(1, 1, 7)]]
