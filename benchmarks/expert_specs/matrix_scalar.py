"""Matrix-scalar multiplication: A * s with s a Python float input."""
import torch
import torch.nn as nn

M = 16384
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, s):
        return A * s


def get_inputs():
    return [torch.randn(M, N), 3.14]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(37, 1531), -0.5], [torch.randn(1, 7), -2.5], [torch.randn(199, 199), 1e3]]
