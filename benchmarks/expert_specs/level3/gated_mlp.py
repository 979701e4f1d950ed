"""A gated residual MLP: one Linear gives two halves, tanh(a) * sigmoid(b) gates them, an output Linear, then the input added back."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["mlp", "gate", "tanh", "sigmoid", "chunk", "linear", "residual", "block"])

batch_size = 512
dim = 512
hidden = 1024


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * hidden)
        self.out = nn.Linear(hidden, dim)

    def forward(self, x):
        a, b = self.proj(x).chunk(2, dim=-1)
        return x + self.out(torch.tanh(a) * torch.sigmoid(b))


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, hidden]


def get_input_variants():
    return [[torch.randn(1, dim)], [torch.randn(4, 9, dim) * 3]]
