"""A pre-norm transformer feed-forward block: x + fc2(gelu(fc1(LayerNorm(x))))."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["transformer", "ffn", "layer_norm", "linear", "gelu", "residual", "block"])

batch_size = 8
seq_len = 256
dim = 512
hidden = 4 * dim


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0, 0.2)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return [dim, hidden]


def get_input_variants():
    return [[torch.randn(1, 1, dim) * 10 + 5], [torch.randn(2, 33, dim)]]
