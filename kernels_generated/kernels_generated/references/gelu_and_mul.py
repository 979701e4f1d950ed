"""vLLM `gelu_and_mul` (GeGLU, exact erf GELU): x = [gate | up], gelu(gate) * up; [T, 2d] -> [T, d]."""
import torch

OPFORGE = dict(name="gelu_and_mul", dtypes=["float16", "float32"], family="serving",
               tags=["serving", "elementwise", "activation", "gelu", "glu", "fp16"],
               implements=["vllm:gelu_and_mul"])  # vLLM's GeluAndMul layer

num_tokens = 2048
intermediate_size = 12288


class Model(torch.nn.Module):
    """vLLM's `GeluAndMul(approximate).forward_native`: "none" is erf GELU, "tanh" the tanh form; gelu(gate)
    in the input dtype (computed in fp32, rounded once), times up in the input dtype (a second rounding)."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        d = x.shape[-1] // 2
        return torch.nn.functional.gelu(x[..., :d], approximate=self.approximate) * x[..., d:]


def _x(tokens, width, dtype=torch.float16, scale=1.0):
    return [torch.randn(tokens, 2 * width).mul(scale).to(dtype)]


def get_inputs():
    return _x(num_tokens, intermediate_size)


def get_init_inputs():
    return ["none"]


def get_input_variants():
    # One decode token; an odd width; gate values out to the tails (gelu(-3) is small, gelu(3) ~ 3); fp32
    # (vLLM on a CPU runs float32 models) at a decoder's width and an odd one.
    return [_x(1, intermediate_size), _x(13, 4097), _x(6, 1000, scale=4.0),
            _x(5, 256, torch.float32), _x(9, 1000, torch.float32, scale=4.0)]
