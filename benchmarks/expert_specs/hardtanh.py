"""Hardtanh with min and max values from the constructor."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 16384
min_val = -0.5
max_val = 2.0


class Model(nn.Module):
    def __init__(self, min_val, max_val):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x):
        return F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [min_val, max_val]


def get_input_variants():
    return [[torch.randn(9, 7001) * 3], [torch.randn(4, 5, 901)], [torch.randn(1, 1)]]
