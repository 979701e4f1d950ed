"""ReLU6: min(max(x, 0), 6)."""
import torch

OPFORGE = dict(name="relu6", dtypes=["float32"], tags=["activation", "elementwise", "relu6", "clamp"], family="activation")

batch_size = 4096
dim = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.relu6(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 4]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(7, 10007) * 8], [torch.randn(5, 5, 5)], [torch.randn(37, 3, 999)]]
