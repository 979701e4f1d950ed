"""MultiKernelBench's add spec as it declares itself (KernelBench format, module-level sizes:
4096 x 393216 floats, 6 GiB per tensor). Written for opforge after MultiKernelBench's layout; a
CPU verification must shrink these sizes (the verdict records the ones used), as for every backend."""
import torch

batch_size = 4096
dim = 393216


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b


def get_inputs():
    a = torch.randn(batch_size, dim)
    b = torch.randn(batch_size, dim)
    return [a, b]


def get_init_inputs():
    return []
