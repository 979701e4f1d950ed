"""Negative log-likelihood of log-softmax outputs with ignored targets, averaged over the rest."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
num_classes = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, targets):
        return F.nll_loss(F.log_softmax(logits, dim=1), targets, ignore_index=-1)


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []


def get_input_variants():
    targets = torch.randint(0, 333, (17,))
    targets[::3] = -1  # ignored rows leave both the sum and the count
    return [[torch.randn(17, 333) * 8, targets], [torch.randn(1, 2), torch.tensor([1])]]
