"""A squeeze-and-excitation block: global average pool, Linear-ReLU-Linear-sigmoid, channels rescaled by the gate."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["squeeze_excitation", "adaptive_avg_pool", "linear", "relu", "sigmoid", "block"],
               fixed_sizes=["reduction"])  # a ratio, not a size to shrink or grow

batch_size = 32
channels = 256
height = 28
width = 28
reduction = 16


class Model(nn.Module):
    def __init__(self, channels, reduction):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):
        s = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        gate = torch.sigmoid(self.fc2(torch.relu(self.fc1(s))))
        return x * gate[:, :, None, None]


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, reduction]


def get_input_variants():
    return [[torch.randn(1, channels, 1, 1)], [torch.randn(3, channels, 7, 5) + 1]]
