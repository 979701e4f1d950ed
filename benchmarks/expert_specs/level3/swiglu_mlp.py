"""A SwiGLU MLP as in LLaMA: down(silu(gate(x)) * up(x)), all three projections bias-free."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["mlp", "swiglu", "silu", "gate", "linear", "block"])

batch_size = 4
seq_len = 256
dim = 512
hidden = 1408


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return [dim, hidden]


def get_input_variants():
    return [[torch.randn(1, 1, dim)], [torch.randn(3, 17, dim) * 2]]
