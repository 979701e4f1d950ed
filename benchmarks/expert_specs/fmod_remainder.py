"""fmod and remainder of signed values: by a tensor (C's truncated sign) and by a scalar (the divisor's sign)."""
import torch

OPFORGE = dict(name="fmod_remainder", dtypes=["float32"], tags=["elementwise", "fmod", "remainder", "modulo"],
               family="elementwise")

batch_size = 4096
dim = 8192
period = -2.5


class Model(torch.nn.Module):
    def __init__(self, period):
        super().__init__()
        self.period = period

    def forward(self, x, y):
        return torch.fmod(x, y) + torch.remainder(x, self.period)


def get_inputs():
    return [torch.randn(batch_size, dim) * 10, torch.randn(batch_size, dim) * 3]


def get_init_inputs():
    return [period]


def get_input_variants():
    return [[torch.randn(19, 1001) * 100, torch.randn(19, 1001)], [torch.randn(3, 5, 77), torch.randn(3, 5, 77) * 0.1]]
