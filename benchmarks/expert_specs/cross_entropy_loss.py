"""Cross entropy of logits [batch, num_classes] against int64 class indices, mean reduction."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
num_classes = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.cross_entropy(predictions, targets)


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []


def get_input_variants():
    return [
        [torch.randn(37, 10), torch.randint(0, 10, (37,))],
        [torch.randn(5, 3001) * 10, torch.randint(0, 3001, (5,))],
        [torch.randn(1, 2), torch.tensor([1])],
    ]
