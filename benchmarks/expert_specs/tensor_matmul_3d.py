"""3-D tensor times matrix: A[b, m, k] @ B[k, n] (B shared across the batch)."""
import torch

OPFORGE = dict(name="tensor_matmul_3d", dtypes=["float32"], tags=["matmul", "gemm", "batched", "broadcast"], family="matmul")

b = 16
m = 1024
k = 2048
n = 768


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(b, m, k), torch.randn(k, n)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 37, 129), torch.randn(129, 61)], [torch.randn(5, 1, 200), torch.randn(200, 33)],
            [torch.randn(1, 150, 7), torch.randn(7, 199)]]
