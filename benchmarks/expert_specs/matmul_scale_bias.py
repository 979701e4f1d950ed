"""Matmul with a scalar epilogue: (A @ B) * scale + bias, scale and bias floats from the constructor."""
import torch
import torch.nn as nn

M = 1024
K = 2048
N = 768
scale = 0.125
bias = -0.5


class Model(nn.Module):
    def __init__(self, scale, bias):
        super().__init__()
        self.scale = scale
        self.bias = bias

    def forward(self, A, B):
        return torch.matmul(A, B) * self.scale + self.bias


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return [scale, bias]


def get_input_variants():
    return [[torch.randn(37, 129), torch.randn(129, 61)], [torch.randn(200, 1), torch.randn(1, 199)],
            [torch.randn(3, 77), torch.randn(77, 5)]]
