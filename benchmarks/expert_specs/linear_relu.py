"""Linear layer (torch.nn.Linear with bias) followed by ReLU."""
import torch
import torch.nn as nn

batch_size = 128
in_features = 4096
out_features = 11008


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    # in_features is fixed by the weight, so the variants change the rows: one row, a ragged count, 3-D.
    return [[torch.randn(1, in_features)], [torch.randn(37, in_features)], [torch.randn(3, 5, in_features)]]
