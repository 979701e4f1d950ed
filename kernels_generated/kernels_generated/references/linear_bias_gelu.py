"""Linear layer then exact GELU: gelu(x @ W^T + b), weights from torch.nn.Linear."""
import torch

OPFORGE = dict(name="linear_bias_gelu", dtypes=["float32"], tags=["matmul", "gemm", "fused", "bias", "gelu", "epilogue"], family="matmul")

batch_size = 512
in_features = 1024
out_features = 1024


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.nn.functional.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    # in_features is fixed by the weight, so the variants change the rows: one row, a ragged count, 3-D.
    return [[torch.randn(1, in_features)], [torch.randn(33, in_features)], [torch.randn(3, 5, in_features)]]
