"""GLU: the last dim split into halves, the first gated by the sigmoid of the second."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 512
features = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.glu(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 5, 2 * 77)], [torch.randn(9, 2)]]
