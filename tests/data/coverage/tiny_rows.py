"""Softmax over 64 rows (the CPU run keeps them all): a kernel for at most 64 rows passes every
given input."""
import torch

OPFORGE = dict(name="tiny_rows", tags=["softmax"])

batch_size = 64
dim = 24


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
