"""ReLU over a 2-D activation tensor."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # A single ragged row, a 3-D input, and many 3-wide rows.
    return [[torch.randn(1, 9973)], [torch.randn(3, 7, 1531)], [torch.randn(1001, 3)]]
