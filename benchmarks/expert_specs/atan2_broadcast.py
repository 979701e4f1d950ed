"""atan2 of a tensor against a per-column denominator: every quadrant, the column broadcast along rows."""
import torch

OPFORGE = dict(name="atan2_broadcast", dtypes=["float32"], tags=["elementwise", "atan2", "trig", "broadcast"],
               family="elementwise")

batch_size = 4096
dim = 8192


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, y, x):
        return torch.atan2(y, x)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(dim)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(13, 2001) * 50, torch.randn(2001) * 0.01], [torch.randn(3, 7, 129), torch.randn(129)]]
