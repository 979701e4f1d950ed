"""3-D convolution, 3x5x1 kernel, stride (1, 2, 1), padding (1, 2, 0)."""
import torch
import torch.nn as nn

OPFORGE = dict(name="66_conv3d_asymmetric_strided", dtypes=["float32"], tags=["conv", "conv3d", "asymmetric", "strided"], family="conv")

batch_size = 8
in_channels = 8
out_channels = 16
depth = 32
height = 64
width = 48


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, (3, 5, 1), stride=(1, 2, 1), padding=(1, 2, 0))

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(2, in_channels, 5, 11, 3)]]
