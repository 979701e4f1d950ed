"""2-D convolution followed by ReLU, fused into the convolution's store."""
import torch
import torch.nn as nn

OPFORGE = dict(name="conv2d_relu", dtypes=["float32"], tags=["conv", "conv2d", "activation"], family="conv")

batch_size = 16
in_channels = 16
out_channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, in_channels, 19, 12)]]
