"""RMSNorm over the last dim: x * rsqrt(mean(x^2) + eps) * weight (Llama style, eps=1e-6)."""
import torch

OPFORGE = dict(name="rms_norm", dtypes=["float32"], tags=["norm", "rmsnorm", "row", "affine"], family="norm")

batch_size = 4096
hidden = 4096


class Model(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(hidden))
        self.eps = 1e-6

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]


def get_input_variants():
    # The last dim is fixed by the weight, so the variants change the rows: one row, a ragged count, 3-D.
    return [[torch.randn(1, hidden)], [torch.randn(33, hidden)], [torch.randn(3, 5, hidden) * 4]]
