"""Batched matmul of two inputs, ReLU, then the max over the last dim: [B, M]."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["bmm", "matmul", "relu", "max", "reduction", "fused"])

batch_size = 64
M = 128
K = 256
N = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.relu(torch.bmm(a, b)).amax(dim=-1)


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(batch_size, K, N)]


def get_init_inputs():
    return []


def get_input_variants():
    # All-negative products (the max is the ReLU's zero), and ragged extents.
    return [[torch.rand(2, 3, 8), -torch.rand(2, 8, 5)], [torch.randn(3, 19, 41), torch.randn(3, 41, 23)]]
