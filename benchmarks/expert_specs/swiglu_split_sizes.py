"""SwiGLU over a fused [gate | up] projection split by a size list (torch.split(x, [d, d], dim=-1)):
exported 2-D, the same kernel must serve 3-D and 4-D inputs."""
import torch
import torch.nn.functional as F

OPFORGE = dict(name="swiglu_split_sizes", dtypes=["float32"], tags=["pointwise", "swiglu", "split"],
               family="pointwise")

tokens = 4096
hidden = 2048


class Model(torch.nn.Module):
    def forward(self, x):
        d = x.shape[-1] // 2
        gate, up = torch.split(x, [d, d], dim=-1)
        return F.silu(gate) * up


def get_inputs():
    return [torch.randn(tokens, 2 * hidden)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(2, 17, 2 * 96)], [torch.randn(2, 3, 5, 2 * 40)]]
