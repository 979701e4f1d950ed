"""Matmul with a transposed right operand: C = A @ B.T, B stored [N, K]."""
import torch
import torch.nn as nn

M = 1024
K = 4096
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B.T)


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(37, 129), torch.randn(61, 129)], [torch.randn(200, 3), torch.randn(150, 3)],
            [torch.randn(1, 199), torch.randn(77, 199)]]
