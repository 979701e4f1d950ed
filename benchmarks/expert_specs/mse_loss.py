"""Mean squared error between predictions and targets, reduced to a scalar."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    return [
        [torch.randn(7, 3001), torch.randn(7, 3001)],
        [torch.randn(1, 1, 5), torch.randn(1, 1, 5)],
        [torch.randn(3, 129, 257) * 4, torch.randn(3, 129, 257)],
    ]
