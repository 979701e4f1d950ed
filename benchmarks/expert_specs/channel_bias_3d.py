"""Per-channel bias on [batch, channels, length]: x + bias with bias shaped [channels, 1]."""
import torch

OPFORGE = dict(name="channel_bias_3d", dtypes=["float32"], tags=["elementwise", "broadcast", "bias", "channel", "strided"], family="elementwise")

batch_size = 64
channels = 256
length = 4096


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        return x + bias


def get_inputs():
    return [torch.randn(batch_size, channels, length), torch.randn(channels, 1)]


def get_init_inputs():
    return []


def get_input_variants():
    return [
        [torch.randn(3, 37, 129), torch.randn(37, 1)],
        [torch.randn(1, 5, 1001), torch.randn(5, 1)],
        [torch.randn(7, 211, 3), torch.randn(211, 1)],
    ]
