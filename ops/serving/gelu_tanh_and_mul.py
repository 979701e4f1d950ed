"""vLLM `gelu_tanh_and_mul` (GeGLU, tanh GELU, Gemma): x = [gate | up], gelu(gate) * up; [T, 2d] -> [T, d]."""
import torch

OPFORGE = dict(name="gelu_tanh_and_mul", dtypes=["bfloat16"], family="serving",
               tags=["serving", "elementwise", "activation", "gelu", "glu", "bf16"])

num_tokens = 2048
intermediate_size = 12288


class Model(torch.nn.Module):
    """vLLM's `GeluAndMul(approximate)`: "none" is erf GELU, "tanh" the tanh form; fp32 math, one rounding."""

    def __init__(self, approximate="tanh"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        d = x.shape[-1] // 2
        gate, up = x[..., :d].float(), x[..., d:].float()
        return (torch.nn.functional.gelu(gate, approximate=self.approximate) * up).to(x.dtype)


def get_inputs():
    return [torch.randn(num_tokens, 2 * intermediate_size).to(torch.bfloat16)]


def get_init_inputs():
    return ["tanh"]


def get_input_variants():
    # One decode token; an odd width; gate values out to the tails (gelu(-3) is small, gelu(3) ~ 3).
    return [[torch.randn(1, 2 * intermediate_size).to(torch.bfloat16)],
            [torch.randn(13, 2 * 4097).to(torch.bfloat16)],
            [torch.randn(6, 2 * 1000).mul(4).to(torch.bfloat16)]]
