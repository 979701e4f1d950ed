"""Product of two lower-triangular matrices, kept lower-triangular."""
import torch
import torch.nn as nn

N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.tril(A @ B)


def get_inputs():
    return [torch.tril(torch.randn(N, N)), torch.tril(torch.randn(N, N))]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.tril(torch.randn(37, 37)), torch.tril(torch.randn(37, 37))]]
