"""Standard 1-D convolution over a long sequence, kernel 3, with bias."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv1d_standard", dtypes=["float32"], tags=["conv", "conv1d"], family="conv")

batch_size = 16
in_channels = 32
out_channels = 64
length = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 3)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions, and a single sample at the smallest size.
    return [[torch.randn(3, in_channels, 37)], [torch.randn(1, in_channels, 3)]]
