"""Dense 2-D matrix multiply C = A @ B with A [M, K] and B [K, N]."""
import torch

OPFORGE = dict(name="matmul", dtypes=["float32"], tags=["matmul", "gemm", "dot"], family="matmul")

M = 512
K = 512
N = 512


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
    # Sizes that leave partial tiles on every side, a single row, and K=1.
    return [
        [torch.randn(1, 200), torch.randn(200, 129)],
        [torch.randn(33, 65), torch.randn(65, 17)],
        [torch.randn(127, 1), torch.randn(1, 3)],
        [torch.randn(200, 197), torch.randn(197, 150)],
    ]
