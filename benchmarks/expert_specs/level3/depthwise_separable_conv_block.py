"""A MobileNet-style depthwise-separable block: depthwise 3x3 conv-BN-ReLU6, pointwise 1x1 conv-BN-ReLU6 (BN at inference)."""
import torch
import torch.nn as nn

OPFORGE = dict(family="level3", tags=["conv2d", "depthwise", "pointwise", "batch_norm", "relu6", "mobilenet", "block"])

batch_size = 32
in_channels = 64
out_channels = 128
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
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.bn1 = _trained(nn.BatchNorm2d(in_channels))
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn2 = _trained(nn.BatchNorm2d(out_channels))

    def forward(self, x):
        x = torch.nn.functional.relu6(self.bn1(self.depthwise(x)))
        return torch.nn.functional.relu6(self.bn2(self.pointwise(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


def get_input_variants():
    return [[torch.randn(1, in_channels, 2, 2) * 5], [torch.randn(2, in_channels, 13, 8)]]
