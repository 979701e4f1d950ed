"""Hinge loss: mean(clamp(1 - predictions * targets, min=0)) with targets in {-1, +1} per row."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randint(0, 2, (batch_size, 1)).float() * 2 - 1]


def get_init_inputs():
    return []


def get_input_variants():
    # Targets broadcast from [rows, 1]; the last case has a full-shape target.
    return [
        [torch.randn(37, 2001), torch.randint(0, 2, (37, 1)).float() * 2 - 1],
        [torch.randn(1, 7) * 3, torch.ones(1, 1)],
        [torch.randn(101, 333), torch.randint(0, 2, (101, 333)).float() * 2 - 1],
    ]
