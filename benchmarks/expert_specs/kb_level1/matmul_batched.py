"""Level-1 style: batched matrix multiplication (torch.bmm) of (b, m, k) by (b, k, n)."""
import torch
import torch.nn as nn

batch_size = 128
m = 128
k = 256
n = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return []
