"""A replication pad of sequences (coordinates clamped to the edges), then a sigmoid."""
import torch
import torch.nn as nn
import torch.nn.functional as F

OPFORGE = dict(name="indexmap_replicate_pad1d", dtypes=["float32"], tags=["indexmap", "pad", "replicate"], family="indexmap")

batch_size = 32
channels = 64
length = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sigmoid(F.pad(x, (1, 4), mode="replicate"))


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 3, 9)], [torch.randn(1, 1, 1)]]
