"""The maximum of each row of a 64 x 256 float matrix (8 rows per core on 8 cores): the corpus's kernels
that store a result with the scalar unit's SetValue and copy it out verify against it. Sized for this
shape like softmax_spec.py: the larger and non-contiguous stress cases are off."""
import torch

OPFORGE = dict(name="row_max", dtypes=["float32"], tags=["reduction"], family="reduction",
               stress={"larger": False, "layouts": False})

rows = 64
cols = 256


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.amax(x, dim=1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
