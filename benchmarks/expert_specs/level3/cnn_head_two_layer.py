"""A tiny CNN classifier head: two conv-ReLU-maxpool stages, global average pool, then a Linear to class logits."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["cnn", "conv2d", "relu", "max_pool", "adaptive_avg_pool", "linear", "block"])

batch_size = 64
in_channels = 3
height = 32
width = 32
num_classes = 100


class Model(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.nn.functional.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.fc(torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, num_classes]


def get_input_variants():
    # The smallest image two 2x2 pools accept, and a non-square one.
    return [[torch.randn(1, in_channels, 4, 4)], [torch.randn(3, in_channels, 23, 38)]]
