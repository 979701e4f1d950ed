"""nn.Linear, a clamp to [-2, 2], GroupNorm over feature groups, then log-sum-exp over the features."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "clamp", "group_norm", "logsumexp", "fused"],
               fixed_sizes=["groups"])  # a group count is semantics, not a size to shrink or grow

batch_size = 1024
in_features = 512
out_features = 1024
groups = 16


class Model(nn.Module):
    def __init__(self, in_features, out_features, groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(groups, out_features)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0, 0.2)

    def forward(self, x):
        return torch.logsumexp(self.norm(torch.clamp(self.fc(x), -2.0, 2.0)), dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, groups]


def get_input_variants():
    return [[torch.randn(1, in_features) * 10], [torch.randn(23, in_features)]]
