"""Two tensors stacked along a new last dim, then shifted: stack is an unsqueeze and a cat."""
import torch
import torch.nn as nn

OPFORGE = dict(name="indexmap_stack_sum", dtypes=["float32"], tags=["indexmap", "stack"], family="indexmap")

batch_size = 128
features = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.stack([x, y], dim=-1) + 1.0


def get_inputs():
    return [torch.randn(batch_size, features), torch.randn(batch_size, features)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 77), torch.randn(3, 77)], [torch.randn(1, 5), torch.randn(1, 5)]]
