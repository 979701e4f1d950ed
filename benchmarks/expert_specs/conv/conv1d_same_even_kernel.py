"""1-D convolution with padding='same' and an even kernel (padded unevenly)."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv1d_same_even_kernel", dtypes=["float32"], tags=["conv", "conv1d", "same"], family="conv")

batch_size = 16
in_channels = 16
out_channels = 32
length = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 4, padding="same")

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(3, in_channels, 29)], [torch.randn(1, in_channels, 2)]]
