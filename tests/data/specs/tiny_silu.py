"""SiLU, tiny sizes: with tiny_softmax, the two-op batch that batch and Ray tests run in seconds."""
import torch

OPFORGE = dict(name="tiny_silu", tags=["elementwise", "activation"])

batch_size = 8
dim = 48


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(5, 19)]]
