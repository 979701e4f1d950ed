"""SwiGLU over a fused [gate | up] projection of [B, T, 2D] activations, split with x.split(d, -1):
exported 3-D, the same kernel must serve [tokens, 2D] and 4-D inputs."""
import torch
import torch.nn.functional as F

OPFORGE = dict(name="swiglu_split_3d", dtypes=["float32"], tags=["pointwise", "swiglu", "split"], family="pointwise")

batch_size = 8
seq_len = 512
hidden = 2048


class Model(torch.nn.Module):
    def forward(self, x):
        gate, up = x.split(x.shape[-1] // 2, -1)
        return F.silu(gate) * up


def get_inputs():
    return [torch.randn(batch_size, seq_len, 2 * hidden)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(33, 2 * 96)], [torch.randn(2, 3, 5, 2 * 40)]]
