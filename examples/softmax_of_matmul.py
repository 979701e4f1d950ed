"""Softmax of a Linear layer's output: softmax(x @ W^T + b, dim=1), KernelBench's Gemm + Softmax.

No single kernel family holds both: the matmul's epilogue is pointwise and a softmax reduces along
the row the matmul's tiles split, so the expert writes two kernels (a matmul with its bias, then a
row softmax) and ModelNew runs them in order."""
import torch

OPFORGE = dict(name="softmax_of_matmul", dtypes=["float32"], tags=["matmul", "gemm", "softmax", "program"],
               family="matmul")

batch_size = 128
in_features = 256
out_features = 512


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.softmax(self.linear(x), dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    # One row, a ragged count of rows (partial tiles of both kernels).
    return [[torch.randn(1, in_features)], [torch.randn(33, in_features)]]
