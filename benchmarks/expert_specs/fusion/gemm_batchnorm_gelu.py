"""nn.Linear, BatchNorm1d at inference (trained-looking running statistics), then exact GELU."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "batch_norm", "gelu", "fused", "inference"])

batch_size = 1024
in_features = 1024
out_features = 512


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)
        with torch.no_grad():
            self.bn.running_mean.normal_(0, 0.3)
            self.bn.running_var.uniform_(0.2, 1.0)
            self.bn.weight.normal_(1, 0.3)
            self.bn.bias.normal_(0, 0.3)

    def forward(self, x):
        return torch.nn.functional.gelu(self.bn(self.fc(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    return [[torch.randn(2, in_features)], [torch.randn(33, in_features) * 2]]
