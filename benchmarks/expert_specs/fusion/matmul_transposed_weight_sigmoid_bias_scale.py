"""x @ W^T with W an [N, K] parameter (torch.matmul on a transposed view), sigmoid, a bias, then doubled."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["matmul", "transpose", "sigmoid", "bias", "scale", "fused"])

batch_size = 1024
in_features = 768
out_features = 1536


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.1)

    def forward(self, x):
        return (torch.sigmoid(torch.matmul(x, self.weight.t())) + self.bias) * 2.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features)], [torch.randn(61, in_features) * 4]]
