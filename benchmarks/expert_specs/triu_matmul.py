"""Strictly upper-triangular part of a rectangular product (the diagonal dropped)."""
import torch
import torch.nn as nn

M = 768
K = 512
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.triu(torch.matmul(A, B), diagonal=1)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(70, 33), torch.randn(33, 9)], [torch.randn(5, 64), torch.randn(64, 130)]]
