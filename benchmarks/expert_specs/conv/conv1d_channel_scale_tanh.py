"""1-D convolution, a learned per-channel scale, then tanh."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv1d_channel_scale_tanh", dtypes=["float32"], tags=["conv", "conv1d", "epilogue"], family="conv")

batch_size = 16
in_channels = 32
out_channels = 48
length = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 5, padding=2)
        self.scale = nn.Parameter(torch.randn(out_channels, 1))

    def forward(self, x):
        return torch.tanh(self.conv(x) * self.scale)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(5, in_channels, 19)]]
