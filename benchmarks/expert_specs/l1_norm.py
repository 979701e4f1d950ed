"""L1 normalisation of each row: x / sum(|x|, dim=1, keepdim=True)."""
import torch

OPFORGE = dict(name="l1_norm", dtypes=["float32"], tags=["reduction", "norm", "l1", "row", "divide"], family="reduction")

batch_size = 4096
dim = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.sum(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(9, 6001)], [torch.randn(1, 65)], [torch.randn(401, 3) * 10]]
