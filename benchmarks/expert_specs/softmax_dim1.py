"""Softmax over dim 1 of a [batch, dim] tensor."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # Large logits (the max shift matters), a single column, and ragged rows.
    return [[torch.randn(7, 3001) * 30], [torch.randn(300, 1)], [torch.randn(33, 5003)]]
