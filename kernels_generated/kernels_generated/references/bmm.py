"""Batched matrix multiply C[b] = A[b] @ B[b] with A [B, M, K] and B [B, K, N]."""
import torch

OPFORGE = dict(name="bmm", dtypes=["float32"], tags=["matmul", "gemm", "batched", "dot"], family="matmul")

batch_size = 32
M = 256
K = 256
N = 256


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B)


def get_inputs():
    return [torch.randn(batch_size, M, K), torch.randn(batch_size, K, N)]


def get_init_inputs():
    return []


def get_input_variants():
    # A batch of one, partial tiles on every side, and tiny matrices.
    return [
        [torch.randn(1, 100, 200), torch.randn(1, 200, 129)],
        [torch.randn(5, 33, 65), torch.randn(5, 65, 17)],
        [torch.randn(3, 1, 7), torch.randn(3, 7, 1)],
    ]
