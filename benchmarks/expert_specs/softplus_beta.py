"""Softplus with beta and threshold from the constructor (linear above threshold / beta)."""
import torch

OPFORGE = dict(name="softplus_beta", dtypes=["float32"], tags=["activation", "elementwise", "softplus", "threshold"], family="activation")

batch_size = 4096
dim = 16384
beta = 2.0
threshold = 10.0


class Model(torch.nn.Module):
    def __init__(self, beta, threshold):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x):
        return torch.nn.functional.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    return [torch.randn(batch_size, dim) * 4]


def get_init_inputs():
    return [beta, threshold]


def get_input_variants():
    # Values straddle the switch to the linear branch (beta * x > threshold at x > 5).
    return [[torch.randn(13, 4003) * 8], [torch.linspace(-12, 12, 5 * 1201).reshape(5, 1201)], [torch.randn(3, 3, 333)]]
