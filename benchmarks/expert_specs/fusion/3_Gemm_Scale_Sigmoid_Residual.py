"""nn.Linear, a learned per-feature scale, sigmoid, then the GEMM's own output added back."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "scale", "sigmoid", "residual", "fused"])

batch_size = 1024
in_features = 512
out_features = 1024


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        y = self.fc(x)
        return torch.sigmoid(y * self.scale) + y


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features)], [torch.randn(37, in_features) * 3]]
