"""nn.Linear, log-sum-exp over the features (kept as a column), then softplus: [B, 1]."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "logsumexp", "softplus", "reduction", "fused"])

batch_size = 1024
in_features = 2048
out_features = 1024


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.nn.functional.softplus(torch.logsumexp(self.fc(x), dim=1, keepdim=True))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features) * 100], [torch.randn(21, in_features) - 1]]
