"""Concatenation along channels, then a ReLU and a scale: cat picks each element's source in-kernel."""
import torch
import torch.nn as nn

OPFORGE = dict(name="indexmap_cat_relu", dtypes=["float32"], tags=["indexmap", "cat", "relu"], family="indexmap")

batch_size = 16
channels_a = 64
channels_b = 96
length = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.relu(torch.cat([a, b], dim=1)) * 2.0


def get_inputs():
    return [torch.randn(batch_size, channels_a, length), torch.randn(batch_size, channels_b, length)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 5, 33), torch.randn(3, 1, 33)], [torch.randn(1, 7, 2), torch.randn(1, 9, 2)]]
