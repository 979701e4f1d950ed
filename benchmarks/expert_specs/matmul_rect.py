"""Rectangular matrix multiplication C[M, N] = A[M, K] @ B[K, N]."""
import torch

OPFORGE = dict(name="matmul_rect", dtypes=["float32"], tags=["matmul", "gemm", "rectangular"], family="matmul")

M = 1024
K = 4096
N = 2048


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []


def get_input_variants():
    # Sides that are not multiples of any tile, a tall-skinny case, and K smaller than a tile.
    return [[torch.randn(37, 129), torch.randn(129, 61)], [torch.randn(200, 3), torch.randn(3, 150)],
            [torch.randn(1, 199), torch.randn(199, 77)]]
