"""Batched matmul of two inputs, a learned bias over the last dim, tanh GELU, then LayerNorm over it."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["bmm", "matmul", "bias", "gelu", "layer_norm", "fused"])

batch_size = 16
M = 256
K = 128
N = 512


class Model(nn.Module):
    def __init__(self, N):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(N) * 0.1)
        self.norm = nn.LayerNorm(N)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0, 0.2)

    def forward(self, a, b):
        return self.norm(torch.nn.functional.gelu(torch.bmm(a, b) + self.bias, approximate="tanh"))


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(batch_size, K, N)]


def get_init_inputs():
    return [N]


def get_input_variants():
    return [[torch.randn(1, 1, 3), torch.randn(1, 3, N)], [torch.randn(2, 9, K), torch.randn(2, K, N) * 2]]
