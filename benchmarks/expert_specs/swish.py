"""Swish written out by hand: x * sigmoid(x)."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(7, 6007) * 20], [torch.randn(1, 1, 3)], [torch.randn(3, 41, 1203)]]
