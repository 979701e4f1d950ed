"""Level-1 style: C = A.T @ B with A stored (K, M): the first operand is read transposed."""
import torch
import torch.nn as nn

M = 1024
K = 4096
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A.T, B)


def get_inputs():
    return [torch.randn(K, M), torch.randn(K, N)]


def get_init_inputs():
    return []
