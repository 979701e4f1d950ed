"""C = A @ B at sizes small enough for the interpreter, with partial tiles on every side."""
import torch

OPFORGE = dict(name="small_matmul", dtypes=["float32"], tags=["matmul"])

M = 96
K = 160
N = 80


class Model(torch.nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(33, 65), torch.randn(65, 17)]]
