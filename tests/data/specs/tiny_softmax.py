"""Softmax over the last dim, tiny sizes so tests of the harness run in seconds."""
import torch

OPFORGE = dict(name="tiny_softmax", tags=["softmax"])

batch_size = 16
dim = 40


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 17)]]
