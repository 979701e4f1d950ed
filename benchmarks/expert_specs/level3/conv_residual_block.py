"""A ResNet basic block: conv3x3-BN-ReLU-conv3x3-BN, the input added back, then ReLU (BN at inference)."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["conv2d", "batch_norm", "relu", "residual", "resnet", "block"])

batch_size = 16
channels = 64
height = 56
width = 56


def _trained(bn):
    with torch.no_grad():
        bn.running_mean.normal_(0, 0.2)
        bn.running_var.uniform_(0.5, 1.5)
        bn.weight.normal_(1, 0.2)
        bn.bias.normal_(0, 0.2)
    return bn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = _trained(nn.BatchNorm2d(channels))
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = _trained(nn.BatchNorm2d(channels))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


def get_input_variants():
    return [[torch.randn(2, channels, 1, 1)], [torch.randn(2, channels, 9, 14)]]
