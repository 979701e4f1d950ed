"""nn.Linear on [B, T, K] tokens, then softmax over the sequence dim (dim 1) and a sum over it per feature."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "softmax", "sum", "tokens", "fused"])

batch_size = 32
seq_len = 256
in_features = 512
out_features = 256


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.value = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        weights = torch.softmax(self.fc(x), dim=1)
        return (weights * self.value).sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, seq_len, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    # One token (the softmax over a single position is 1), and a ragged sequence.
    return [[torch.randn(2, 1, in_features)], [torch.randn(3, 37, in_features) * 5]]
