"""A 2-input add of 4100 floats: four 1024-float tiles and a 4-float (16-byte) tail, a length no 32-byte
DataCopy block divides (the corpus's ragged-tail kernels verify against it)."""
import torch

OPFORGE = dict(name="tail_add", dtypes=["float32"], tags=["elementwise"], family="elementwise")

size = 4100


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x + y


def get_inputs():
    return [torch.randn(size), torch.randn(size)]


def get_init_inputs():
    return []
