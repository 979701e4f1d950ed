"""Softmax over the channel axis of a [batch, length, channels] tensor read through a transpose."""
import torch
import torch.nn as nn

batch_size = 32
channels = 256
length = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x.transpose(1, 2), dim=-1)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 33, 7) * 10], [torch.randn(1, 1000, 3)]]
