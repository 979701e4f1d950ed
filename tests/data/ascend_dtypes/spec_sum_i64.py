"""The sum of 4096 int64 values, as a one-element int64 tensor."""
import torch

OPFORGE = dict(name="sum_i64", dtypes=["int64"], tags=["reduction"])

n = 4096


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.sum(x, dtype=torch.int64).reshape(1)


def get_inputs():
    return [torch.randint(-1000, 1000, (n,), dtype=torch.int64)]


def get_init_inputs():
    return []
