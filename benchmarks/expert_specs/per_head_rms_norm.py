"""Per-head RMSNorm of attention queries (QK-norm): [B, T, H*D] viewed as heads, normalised over D, viewed back."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 1024
heads = 16
head_dim = 128


class Model(nn.Module):
    def __init__(self, heads, head_dim, eps=1e-6):
        super().__init__()
        self.heads, self.eps = heads, eps
        self.weight = nn.Parameter(torch.randn(head_dim))

    def forward(self, q):
        b, t, _ = q.shape
        x = q.view(b, t, self.heads, -1)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        return x.view(b, t, -1)


def get_inputs():
    return [torch.randn(batch_size, seq_len, heads * head_dim)]


def get_init_inputs():
    return [heads, head_dim]


def get_input_variants():
    return [[torch.randn(1, 3, heads * head_dim) * 10], [torch.randn(2, 33, heads * head_dim)]]
