"""ELU with alpha passed to the constructor."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 16384
alpha = 1.0


class Model(nn.Module):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [alpha]


def get_input_variants():
    # Large magnitudes (exp saturates to -alpha), a ragged 2-D input, and a 3-D input.
    return [[torch.randn(13, 3001) * 10], [torch.randn(1, 777)], [torch.randn(4, 9, 555)]]
