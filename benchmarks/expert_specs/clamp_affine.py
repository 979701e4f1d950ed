"""Affine then clamp: clamp(x * scale + bias, -1, 1), scale and bias scalars from the constructor."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 16384
scale = 0.75
bias = 0.1


class Model(nn.Module):
    def __init__(self, scale, bias):
        super().__init__()
        self.scale = scale
        self.bias = bias

    def forward(self, x):
        return torch.clamp(x * self.scale + self.bias, -1, 1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [scale, bias]


def get_input_variants():
    return [[torch.randn(13, 6007) * 2], [torch.randn(1, 3, 1001)], [torch.randn(255, 9)]]
