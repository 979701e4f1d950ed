"""SwiGLU over a fused [gate | up] projection, its halves sliced as rank-generic engine code writes
them (x[..., :d], x[..., d:]): exported 2-D, the same kernel must serve [B, T, 2D] and 4-D inputs."""
import torch
import torch.nn.functional as F

OPFORGE = dict(name="swiglu_ellipsis_slice", dtypes=["float32"], tags=["pointwise", "swiglu", "slice"],
               family="pointwise")

tokens = 4096
hidden = 2048


class Model(torch.nn.Module):
    def forward(self, x):
        d = x.shape[-1] // 2
        return F.silu(x[..., :d]) * x[..., d:]


def get_inputs():
    return [torch.randn(tokens, 2 * hidden)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 17, 2 * 96)], [torch.randn(2, 3, 5, 2 * 40)], [torch.randn(3, 2 * 201)]]
