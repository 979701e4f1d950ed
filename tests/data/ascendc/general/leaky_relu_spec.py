"""LeakyReLU with its slope as a constructor argument (MultiKernelBench's layout: the slope reaches the
custom op as an operator attribute)."""
import torch

batch_size = 16
dim = 16384
negative_slope = 0.01


class Model(torch.nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [negative_slope]
