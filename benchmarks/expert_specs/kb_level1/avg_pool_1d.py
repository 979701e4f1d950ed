"""Level-1 style: nn.AvgPool1d with stride and zero padding (padding counted in the average)."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 32
input_length = 128
kernel_size = 4
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.avg_pool(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, input_length)]


def get_init_inputs():
    return [kernel_size, stride, padding]
