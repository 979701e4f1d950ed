"""Population standard deviation (correction=0) over the last dim, keepdim."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.std(x, dim=-1, correction=0, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(33, 2001) * 3 - 50.0], [torch.randn(1, 5000)], [torch.randn(2, 9, 77)]]
