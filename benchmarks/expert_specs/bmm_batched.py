"""Batched matrix multiplication: bmm of [batch, m, k] and [batch, k, n]."""
import torch
import torch.nn as nn

batch_size = 128
m = 128
k = 256
n = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 37, 129), torch.randn(3, 129, 61)], [torch.randn(7, 1, 200), torch.randn(7, 200, 33)],
            [torch.randn(1, 150, 9), torch.randn(1, 9, 111)]]
