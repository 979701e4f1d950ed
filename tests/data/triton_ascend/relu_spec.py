"""ReLU over 300,000 elements (small enough for a CPU run unshrunk)."""
import torch

OPFORGE = dict(name="relu_300k", dtypes=["float32"], tags=["pointwise"])

n = 300000


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
