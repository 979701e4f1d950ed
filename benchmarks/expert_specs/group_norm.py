"""nn.GroupNorm: channels split into groups, each (sample, group) normalised, then a per-channel affine map."""
import torch
import torch.nn as nn

batch_size = 16
channels = 64
groups = 8
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.norm.weight.normal_()
            self.norm.bias.normal_()

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [groups, channels]


def get_input_variants():
    # A large offset (a one-pass variance would lose it), a ragged plane, a single position.
    return [[torch.randn(2, channels, 37, 41) * 3 + 100], [torch.randn(3, channels, 1, 1)]]
