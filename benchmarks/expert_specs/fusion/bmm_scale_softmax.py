"""Batched matmul of two inputs, scaled by a constant, then softmax over the last dim (attention-like scores)."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["bmm", "matmul", "scale", "softmax", "fused"])

batch_size = 32
M = 256
K = 64
N = 256


class Model(nn.Module):
    def __init__(self, K):
        super().__init__()
        self.scale = 1.0 / K ** 0.5

    def forward(self, a, b):
        return torch.softmax(torch.bmm(a, b) * self.scale, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(batch_size, K, N)]


def get_init_inputs():
    return [K]


def get_input_variants():
    return [[torch.randn(1, 1, K), torch.randn(1, K, 7)], [torch.randn(3, 17, K) * 6, torch.randn(3, K, 33)]]
