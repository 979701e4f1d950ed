"""Bias-free GEMM, a separate bias parameter, then tanh-approximated GELU: gelu(x @ W^T + b)."""
import torch

OPFORGE = dict(name="gemm_bias_gelu_tanh", dtypes=["float32"], tags=["matmul", "gemm", "fused", "bias", "gelu", "epilogue"], family="matmul")

batch_size = 256
in_features = 2048
out_features = 5120


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = torch.nn.Linear(in_features, out_features, bias=False)
        self.bias = torch.nn.Parameter(torch.randn(out_features) * 0.1)

    def forward(self, x):
        return torch.nn.functional.gelu(self.gemm(x) + self.bias, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    # in_features is fixed by the weight, so the variants change the rows.
    return [[torch.randn(1, in_features)], [torch.randn(23, in_features) * 2], [torch.randn(2, 7, in_features)]]
