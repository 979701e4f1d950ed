"""LeakyReLU with the negative slope passed to the constructor."""
import torch

OPFORGE = dict(name="leaky_relu", dtypes=["float32"], tags=["activation", "elementwise", "leaky_relu"], family="activation")

batch_size = 4096
dim = 16384
negative_slope = 0.01


class Model(torch.nn.Module):
    def __init__(self, negative_slope):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [negative_slope]


def get_input_variants():
    # Ragged rows, a 3-D input, and a column vector.
    return [[torch.randn(7, 4099)], [torch.randn(5, 3, 1111)], [torch.randn(2047, 1)]]
