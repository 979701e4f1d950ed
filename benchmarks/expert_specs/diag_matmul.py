"""A diagonal matrix built from a vector, times a dense matrix: each row scaled."""
import torch
import torch.nn as nn

M = 4096
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, d, B):
        return torch.diag(d) @ B


def get_inputs():
    return [torch.randn(M), torch.randn(M, N)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(33), torch.randn(33, 7)], [torch.randn(1), torch.randn(1, 1000)]]
