"""A residual MLP block: relu(x + fc2(gelu(fc1(x)))) with a 4x hidden expansion."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["mlp", "linear", "gelu", "residual", "relu", "block"])

batch_size = 512
dim = 512
hidden = 4 * dim


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return torch.relu(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, hidden]


def get_input_variants():
    return [[torch.randn(1, dim)], [torch.randn(3, 11, dim)]]
