"""float32 -> float16 -> float32 of 16384 floats (8 cores x 2 tiles of 1024): the corpus's Cast kernels
verify against it (torch's .half() rounds to nearest even)."""
import torch

OPFORGE = dict(name="cast_round_trip", dtypes=["float32"], tags=["elementwise"], family="elementwise")

size = 16384


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.half().float()


def get_inputs():
    return [torch.randn(size)]


def get_init_inputs():
    return []
