"""A three-layer MLP: Linear, ReLU, Linear, ReLU, Linear."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["mlp", "linear", "relu", "block"])

batch_size = 256
in_features = 1024
hidden = 2048
out_features = 256


class Model(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(in_features, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden // 2), nn.ReLU(),
            nn.Linear(hidden // 2, out_features),
        )

    def forward(self, x):
        return self.layers(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden, out_features]


def get_input_variants():
    return [[torch.randn(1, in_features)], [torch.randn(19, in_features) * 3]]
