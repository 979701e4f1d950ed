"""Residual add then scale: (x + residual) * scale, scale a scalar from the constructor."""
import torch

OPFORGE = dict(name="residual_add_scale", dtypes=["float32"], tags=["elementwise", "residual", "scale", "binary"], family="elementwise")

batch_size = 32
seq_len = 2048
hidden = 768
scale = 0.7071


class Model(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x, residual):
        return (x + residual) * self.scale


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden), torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [scale]


def get_input_variants():
    return [
        [torch.randn(3, 17, 769), torch.randn(3, 17, 769)],
        [torch.randn(1, 1, 5), torch.randn(1, 1, 5)],
        [torch.randn(2, 333, 131), torch.randn(2, 333, 131)],
    ]
