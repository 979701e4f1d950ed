"""Single-head self-attention written out: Q, K, V projections, bmm scores scaled by 1/sqrt(d), softmax, bmm with V."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["attention", "bmm", "softmax", "linear", "block"])

batch_size = 16
seq_len = 256
embed_dim = 256


class Model(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.q = nn.Linear(embed_dim, embed_dim)
        self.k = nn.Linear(embed_dim, embed_dim)
        self.v = nn.Linear(embed_dim, embed_dim)
        self.scale = embed_dim ** -0.5

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = torch.bmm(q, k.transpose(1, 2)) * self.scale
        return torch.bmm(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [torch.randn(batch_size, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim]


def get_input_variants():
    # One token (its softmax is exactly 1), and a ragged sequence with large activations.
    return [[torch.randn(2, 1, embed_dim)], [torch.randn(3, 29, embed_dim) * 4]]
