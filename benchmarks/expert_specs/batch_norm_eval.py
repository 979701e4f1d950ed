"""BatchNorm2d at inference: each channel scaled and shifted by its running statistics and affine weights."""
import torch
import torch.nn as nn

OPFORGE = dict(mode="eval")  # inference: the running statistics, not the batch's (harness/mode.py)

batch_size = 16
channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        # Statistics as a trained network has them, so no term of the affine map is the identity.
        with torch.no_grad():
            self.bn.running_mean.normal_()
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.normal_()
            self.bn.bias.normal_()

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


def get_input_variants():
    return [[torch.randn(1, channels, 3, 129)], [torch.randn(5, channels, 1, 1) * 10]]
