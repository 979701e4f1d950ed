"""nn.Linear, RMS normalisation over the features with a learned gain, then SiLU."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "rms_norm", "silu", "fused"])

batch_size = 1024
in_features = 1024
out_features = 1024


class Model(nn.Module):
    def __init__(self, in_features, out_features, eps=1e-6):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.gain = nn.Parameter(torch.rand(out_features) + 0.5)
        self.eps = eps

    def forward(self, x):
        y = self.fc(x)
        y = y * torch.rsqrt(y.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.gain
        return torch.nn.functional.silu(y)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features) * 1000], [torch.randn(4, 6, in_features)]]
