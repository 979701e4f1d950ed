"""RMSNorm with a weight, tiny sizes: for export tests of a kernel module sized for one problem."""
import torch

OPFORGE = dict(name="tiny_rms_norm", tags=["norm", "rmsnorm", "row"])

batch_size = 8
hidden = 48


class Model(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]


def get_input_variants():
    return [[torch.randn(1, hidden)], [torch.randn(3, 5, hidden)]]
