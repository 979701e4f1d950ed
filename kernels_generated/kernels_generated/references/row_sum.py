"""Sum of each row (over the last dim)."""
import torch

OPFORGE = dict(name="row_sum", dtypes=["float32"], tags=["reduction", "sum", "row"], family="reduction")

batch_size = 4096
dim = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # One short row, ragged non-power-of-two rows, a 3-D input, long rows spanning several column
    # blocks, and many 3-wide rows (smaller than the smallest tile).
    return [[torch.randn(1, 1000)], [torch.randn(7, 4097)], [torch.randn(3, 5, 333)], [torch.randn(5, 20000)],
            [torch.randn(129, 3)]]
