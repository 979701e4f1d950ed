"""nn.InstanceNorm2d with affine weights: each (sample, channel) plane normalised on its own statistics."""
import torch
import torch.nn as nn

batch_size = 16
channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True)
        with torch.no_grad():
            self.norm.weight.normal_()
            self.norm.bias.normal_()

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


def get_input_variants():
    # A large offset (a one-pass variance would lose it) and a ragged plane.
    return [[torch.randn(2, channels, 37, 41) * 3 + 100], [torch.randn(1, channels, 1, 999)]]
