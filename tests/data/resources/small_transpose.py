"""The transpose of a 96 x 160 matrix, materialised: small enough for the interpreter, with partial
tiles on both sides."""
import torch

OPFORGE = dict(name="small_transpose", dtypes=["float32"], tags=["transpose", "layout"])

M = 96
N = 160


class Model(torch.nn.Module):
    def forward(self, x):
        return x.t().contiguous()


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(33, 65)]]
