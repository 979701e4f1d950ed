"""nn.Linear, softmax over the output features, then a learned per-feature scale."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "softmax", "scale", "fused"])

batch_size = 512
in_features = 1024
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.rand(out_features) * 2)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=1) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    # Logits in the hundreds (exp overflows unless the row max is subtracted).
    return [[torch.randn(2, in_features) * 200], [torch.randn(13, in_features)]]
