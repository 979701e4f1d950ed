"""SwiGLU gate of an LLM MLP: silu(a) * b."""
import torch

OPFORGE = dict(name="swiglu", dtypes=["float32"], tags=["elementwise", "activation", "silu", "glu"], family="activation")

batch_size = 2048
intermediate_size = 11008  # Llama-7B MLP width: not a power of two


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.nn.functional.silu(a) * b


def get_inputs():
    return [torch.randn(batch_size, intermediate_size), torch.randn(batch_size, intermediate_size)]


def get_init_inputs():
    return []


def get_input_variants():
    return [
        [torch.randn(1, 1000), torch.randn(1, 1000)],
        [torch.randn(7, 4097) * 8, torch.randn(7, 4097)],
        [torch.randn(3, 5, 333), torch.randn(3, 5, 333)],
    ]
