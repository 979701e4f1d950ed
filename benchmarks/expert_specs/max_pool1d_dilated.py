"""1-D max pooling over a sequence with padding and dilation (torch lowers it to a 2-D pool)."""
import torch
import torch.nn as nn

batch_size = 32
channels = 64
length = 8192


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [4, 2, 2, 3]


def get_input_variants():
    # All-negative values: a zero from the padding must never win.
    return [[-torch.rand(2, 3, 61) - 1], [torch.randn(1, 1, 11)]]
