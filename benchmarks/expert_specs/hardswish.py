"""Hardswish: x * relu6(x + 3) / 6."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(5, 9999) * 4], [torch.randn(3, 3, 3)], [torch.randn(8, 15, 1201)]]
