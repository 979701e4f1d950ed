"""Index (int64) of the first max of each row (over the last dim)."""
import torch

OPFORGE = dict(name="row_argmax", dtypes=["float32"], tags=["reduction", "argmax", "row", "int64-output"], family="reduction")

batch_size = 4096
dim = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # One short row, ragged non-power-of-two rows, a 3-D input, long rows spanning several column
    # blocks, 3-wide rows (many all-negative: padding must not win), and many ties (first index wins).
    return [[torch.randn(1, 1000)], [torch.randn(7, 4097)], [torch.randn(3, 5, 333)], [torch.randn(5, 20000)],
            [torch.randn(129, 3)], [torch.randint(0, 4, (33, 5000)).to(torch.float32)]]
