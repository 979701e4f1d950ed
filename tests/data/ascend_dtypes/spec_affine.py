"""y = 2x + 1 over 4096 floats: a pointwise op small enough for the Ascend interpreter."""
import torch

OPFORGE = dict(name="affine_4k", dtypes=["float32"], tags=["pointwise"])

n = 4096


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2.0 + 1.0


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []
