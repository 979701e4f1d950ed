"""The sum of 4096 int32 values, as a one-element int32 tensor."""
import torch

OPFORGE = dict(name="sum_i64", dtypes=["int32"], tags=["reduction"])

n = 4096


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.sum(x, dtype=torch.int32).reshape(1)


def get_inputs():
    return [torch.randint(-1000, 1000, (n,), dtype=torch.int32)]


def get_init_inputs():
    return []
