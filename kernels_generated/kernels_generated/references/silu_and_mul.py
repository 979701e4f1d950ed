"""vLLM `silu_and_mul` (SwiGLU): x = [gate | up] on the last dim, silu(gate) * up; [T, 2d] -> [T, d]."""
import torch

OPFORGE = dict(name="silu_and_mul", dtypes=["bfloat16", "float32"], family="serving",
               tags=["serving", "elementwise", "activation", "silu", "glu", "bf16"],
               implements=["vllm:silu_and_mul"])  # vLLM's SiluAndMul layer

num_tokens = 2048
intermediate_size = 14336  # Llama-3-8B MLP width per half of the fused gate_up projection


class Model(torch.nn.Module):
    """vLLM's `SiluAndMul.forward_native`: silu(gate) in the input dtype (computed in fp32 and rounded
    once), times up in the input dtype (a second rounding in bf16)."""

    def forward(self, x):
        d = x.shape[-1] // 2
        return torch.nn.functional.silu(x[..., :d]) * x[..., d:]


def _x(tokens, width, dtype=torch.bfloat16, scale=1.0):
    return [torch.randn(tokens, 2 * width).mul(scale).to(dtype)]


def get_inputs():
    return _x(num_tokens, intermediate_size)


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; an odd width (no power-of-two block divides it); large gate values; fp32 (vLLM on a
    # CPU runs float32 models) at a decoder's width and an odd one.
    return [_x(1, intermediate_size), _x(13, 4097), _x(6, 1000, scale=8.0),
            _x(5, 256, torch.float32), _x(9, 1000, torch.float32, scale=8.0)]
