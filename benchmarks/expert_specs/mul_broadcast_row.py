"""Elementwise product x * y where y is a [1, dim] row broadcast over the batch."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x * y


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(1, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    return [
        [torch.randn(17, 3001), torch.randn(1, 3001)],
        [torch.randn(1, 9999), torch.randn(1, 9999)],
        [torch.randn(1023, 7), torch.randn(1, 7)],
    ]
