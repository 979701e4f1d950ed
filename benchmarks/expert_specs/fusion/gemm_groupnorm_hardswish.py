"""nn.Linear, GroupNorm over groups of output features (a [B, C] input), then hardswish."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "group_norm", "hardswish", "fused"],
               fixed_sizes=["groups"])  # a group count is semantics, not a size to shrink or grow

batch_size = 512
in_features = 1024
out_features = 1024
groups = 16


class Model(nn.Module):
    def __init__(self, in_features, out_features, groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(groups, out_features)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 2.0)
            self.norm.bias.normal_(0, 0.5)

    def forward(self, x):
        return torch.nn.functional.hardswish(self.norm(self.fc(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, groups]


def get_input_variants():
    return [[torch.randn(1, in_features) + 10], [torch.randn(19, in_features)]]
