"""F.conv2d with the weight passed as a forward input, stride 2."""
import torch
import torch.nn as nn
import torch.nn.functional as F

OPFORGE = dict(name="conv2d_functional_weight_input", dtypes=["float32"], tags=["conv", "conv2d", "functional"], family="conv")

batch_size = 16
in_channels = 16
out_channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x, weight):
        return F.conv2d(x, weight, stride=2, padding=1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width), torch.randn(out_channels, in_channels, 3, 3)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged sizes: no tile divides the output positions.
    return [[torch.randn(3, in_channels, 15, 18), torch.randn(out_channels, in_channels, 3, 3)]]
