"""RMSNorm with eps and a weight, tiny sizes: the stress stage's small-activation case."""
import torch

OPFORGE = dict(name="tiny_rms_norm", tags=["norm"])

batch_size = 24
hidden = 48


class Model(torch.nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden) + 0.1 * torch.randn(hidden))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]


def get_input_variants():
    return [[torch.randn(5, hidden)]]
