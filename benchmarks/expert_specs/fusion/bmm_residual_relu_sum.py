"""Batched matmul by a square per-batch matrix, the left input added back, ReLU, then the sum over rows."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["bmm", "matmul", "residual", "relu", "sum", "reduction", "fused"])

batch_size = 32
M = 512
K = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return torch.relu(torch.bmm(x, w) + x).sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(batch_size, K, K) / K ** 0.5]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(1, 1, 5), torch.randn(1, 5, 5)], [torch.randn(3, 21, 40), torch.randn(3, 40, 40)]]
