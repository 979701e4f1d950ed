"""Conv1d over a sequence, GELU, then LayerNorm over channels at each position (transposed to [B, L, C] and back)."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["conv1d", "gelu", "layer_norm", "transpose", "fused"])

batch_size = 64
in_channels = 32
out_channels = 128
length = 512
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=1)
        self.norm = nn.LayerNorm(out_channels)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0, 0.2)

    def forward(self, x):
        x = torch.nn.functional.gelu(self.conv(x))
        return self.norm(x.transpose(1, 2)).transpose(1, 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def get_input_variants():
    return [[torch.randn(1, in_channels, 1)], [torch.randn(3, in_channels, 77) * 5 + 3]]
