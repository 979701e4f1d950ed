"""Swish with a temperature: x * sigmoid(beta * x), beta passed to the constructor."""
import torch

OPFORGE = dict(name="swish_beta", dtypes=["float32"], tags=["activation", "elementwise", "swish", "gated"], family="activation")

batch_size = 2048
dim = 16384
beta = 1.702


class Model(torch.nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, x):
        return x * torch.sigmoid(self.beta * x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [beta]


def get_input_variants():
    return [[torch.randn(19, 2021)], [torch.randn(2, 5, 3003) * 6], [torch.randn(997, 7)]]
