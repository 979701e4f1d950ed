"""Integer remainder and fmod with negative operands: floored (Python %) and truncated (C %) signs."""
import torch

OPFORGE = dict(name="remainder_int", dtypes=["int64"], tags=["elementwise", "fmod", "remainder", "integer"],
               family="elementwise")

batch_size = 4096
dim = 4096


def _divisors(*shape):
    return torch.randint(1, 50, shape) * (2 * torch.randint(0, 2, shape) - 1)  # never 0, either sign


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.remainder(a, b) * 3 + torch.fmod(a, -7)


def get_inputs():
    return [torch.randint(-1000, 1000, (batch_size, dim)), _divisors(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randint(-10**6, 10**6, (31, 1001)), _divisors(31, 1001)], [torch.randint(-9, 9, (2, 3, 55)), _divisors(2, 3, 55)]]
