"""Bilinear upsampling by 2 (align_corners=False: four loads weighted per output), then a sigmoid."""
import torch
import torch.nn as nn
import torch.nn.functional as F

OPFORGE = dict(name="indexmap_upsample_bilinear", dtypes=["float32"], tags=["indexmap", "upsample", "bilinear"], family="indexmap")

batch_size = 8
channels = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sigmoid(F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 3, 5, 7)], [torch.randn(1, 1, 1, 3)]]
