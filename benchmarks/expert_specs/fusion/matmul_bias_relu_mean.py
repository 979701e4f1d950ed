"""torch.matmul of two inputs, a learned bias row, ReLU, then the mean over the last dim."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["matmul", "bias", "relu", "mean", "reduction", "fused"])

M = 1024
K = 512
N = 1024


class Model(nn.Module):
    def __init__(self, N):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(N) * 0.2)

    def forward(self, a, b):
        return torch.relu(torch.matmul(a, b) + self.bias).mean(dim=-1)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return [N]


def get_input_variants():
    # A single row, and an inner dim that is no multiple of a tile.
    return [[torch.randn(1, K), torch.randn(K, N)], [torch.randn(29, 37), torch.randn(37, N)]]
