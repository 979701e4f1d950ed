"""nn.Linear, max pooling by 4 across the output features, tanh, then the sum over what is left."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "max_pool", "tanh", "sum", "reduction", "fused"])

batch_size = 1024
in_features = 1024
out_features = 1024
pool = 4


class Model(nn.Module):
    def __init__(self, in_features, out_features, pool):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.pool = pool

    def forward(self, x):
        y = torch.nn.functional.max_pool1d(self.fc(x).unsqueeze(1), self.pool).squeeze(1)
        return torch.tanh(y).sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, pool]


def get_input_variants():
    return [[torch.randn(1, in_features)], [torch.randn(27, in_features) * 2]]
