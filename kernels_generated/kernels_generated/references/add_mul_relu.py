"""Elementwise chain relu(x * y + bias), with bias a row broadcast over the last dim."""
import torch

OPFORGE = dict(name="add_mul_relu", dtypes=["float32"], tags=["elementwise", "fused", "broadcast"], family="elementwise")

batch_size = 4096
dim = 4096


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y, bias):
        return torch.relu(x * y + bias)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim), torch.randn(dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # Ragged rows, a 3-D input with a bias row, and a full-shape (non-row) bias.
    return [
        [torch.randn(1, 1000), torch.randn(1, 1000), torch.randn(1000)],
        [torch.randn(7, 4097), torch.randn(7, 4097), torch.randn(4097)],
        [torch.randn(3, 5, 333), torch.randn(3, 5, 333), torch.randn(333)],
        [torch.randn(33, 65), torch.randn(33, 65), torch.randn(33, 65)],
    ]
