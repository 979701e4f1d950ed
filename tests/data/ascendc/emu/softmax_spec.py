"""Row-wise softmax of a 64 x 256 float matrix (8 rows per core on 8 cores, a 1 KB row per tile): the
corpus's reduction kernels (ReduceMax/ReduceSum and a scalar GetValue of their result) verify against it.
The kernels are sized for this shape (rows divisible by 8, contiguous rows), so the larger and
non-contiguous stress cases are off: the corpus is about the pipes, not about tiling."""
import torch

OPFORGE = dict(name="row_softmax", dtypes=["float32"], tags=["reduction"], family="softmax",
               stress={"larger": False, "layouts": False})

rows = 64
cols = 256


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
