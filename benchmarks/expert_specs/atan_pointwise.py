"""Arctangent of a scaled input, over a range wide enough to reach every branch of the reduction."""
import torch

OPFORGE = dict(name="atan_pointwise", dtypes=["float32"], tags=["elementwise", "atan", "trig"], family="elementwise")

batch_size = 4096
dim = 8192
scale = 4.0


class Model(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.atan(self.scale * x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [scale]


def get_input_variants():
    return [[torch.randn(17, 3001) * 1000], [torch.randn(2, 9, 1001) * 1e-3], [torch.randn(1023, 5)]]
