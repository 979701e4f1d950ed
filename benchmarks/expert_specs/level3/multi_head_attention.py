"""Multi-head self-attention: one fused QKV Linear, heads split by reshape/transpose, matmul-softmax-matmul, heads merged, output Linear."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["attention", "multi_head", "matmul", "softmax", "reshape", "transpose", "block"])

batch_size = 8
seq_len = 256
embed_dim = 512
num_heads = 8


class Model(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.heads = num_heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.out = nn.Linear(embed_dim, embed_dim)

    def forward(self, x):
        b, t, e = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (y.reshape(b, t, self.heads, e // self.heads).transpose(1, 2) for y in (q, k, v))
        scores = torch.matmul(q, k.transpose(-2, -1)) * (e // self.heads) ** -0.5
        y = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.out(y.transpose(1, 2).reshape(b, t, e))


def get_inputs():
    return [torch.randn(batch_size, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads]


def get_input_variants():
    return [[torch.randn(1, 1, embed_dim)], [torch.randn(2, 19, embed_dim) * 3]]
