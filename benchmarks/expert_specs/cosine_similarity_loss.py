"""Cosine-similarity loss: mean over rows of 1 - cos(predictions, targets) along dim 1."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(1 - F.cosine_similarity(predictions, targets, dim=1))


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    base = torch.randn(19, 1531)
    return [
        [base, base * 2 + torch.randn(19, 1531) * 0.1],  # nearly parallel rows: the loss is small
        [torch.randn(1, 9), torch.randn(1, 9)],
        [torch.randn(211, 257), torch.randn(211, 257) * 100],
    ]
