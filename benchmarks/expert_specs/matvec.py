"""Matrix-vector product: A[M, K] @ B[K, 1]."""
import torch

OPFORGE = dict(name="matvec", dtypes=["float32"], tags=["matmul", "gemv", "memory-bound"], family="matmul")

M = 256
K = 131072


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(37, 199), torch.randn(199, 1)], [torch.randn(200, 3), torch.randn(3, 1)],
            [torch.randn(1, 150), torch.randn(150, 1)]]
