"""Gated SiLU on one packed tensor: the last dim holds [gate | up] halves, out = silu(gate) * up."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
hidden = 11008


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up


def get_inputs():
    return [torch.randn(batch_size, 2 * hidden)]


def get_init_inputs():
    return []


def get_input_variants():
    # The last dim must be even; each half is odd-sized and ragged.
    return [[torch.randn(7, 2 * 1531)], [torch.randn(3, 4, 2 * 999)], [torch.randn(129, 2 * 3)]]
