"""Matmul with a transposed left operand: C = A.T @ B, A stored [K, M]."""
import torch

OPFORGE = dict(name="matmul_transposed_a", dtypes=["float32"], tags=["matmul", "gemm", "transpose", "strided"], family="matmul")

M = 1024
K = 4096
N = 2048


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A.T, B)


def get_inputs():
    return [torch.randn(K, M), torch.randn(K, N)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(129, 37), torch.randn(129, 61)], [torch.randn(3, 200), torch.randn(3, 150)],
            [torch.randn(199, 1), torch.randn(199, 77)]]
