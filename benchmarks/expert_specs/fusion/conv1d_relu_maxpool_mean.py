"""Conv1d, ReLU, max pooling by 2 along the sequence, then the mean over the sequence: [B, C]."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv1d", "relu", "max_pool", "mean", "reduction", "fused"])

batch_size = 128
in_channels = 16
out_channels = 64
length = 1024
kernel_size = 7


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = torch.nn.functional.max_pool1d(torch.relu(self.conv(x)), 2)
        return x.mean(dim=2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    # The shortest sequence that leaves one pooled position, and an odd length.
    return [[torch.randn(2, in_channels, 8)], [torch.randn(5, in_channels, 101)]]
