"""Margin ranking loss between two score columns, the ranking direction taken from a third column."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 65536


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, scores, other):
        return F.margin_ranking_loss(scores[:, 0], other[:, 0], torch.sign(scores[:, 1]), margin=self.margin)


def get_inputs():
    return [torch.randn(batch_size, 2), torch.randn(batch_size, 2)]


def get_init_inputs():
    return [0.2]


def get_input_variants():
    return [[torch.randn(7, 3), torch.randn(7, 2)], [torch.randn(1, 2), torch.randn(1, 2)]]
