"""Which elements are positive: a bool output, tiny sizes."""
import torch

OPFORGE = dict(name="tiny_positive", tags=["elementwise"])

batch_size = 16
dim = 40


class Model(torch.nn.Module):
    def forward(self, x):
        return x > 0


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
