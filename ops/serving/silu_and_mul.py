"""vLLM `silu_and_mul` (SwiGLU): x = [gate | up] on the last dim, silu(gate) * up; [T, 2d] -> [T, d]."""
import torch

OPFORGE = dict(name="silu_and_mul", dtypes=["bfloat16"], family="serving",
               tags=["serving", "elementwise", "activation", "silu", "glu", "bf16"])

num_tokens = 2048
intermediate_size = 14336  # Llama-3-8B MLP width per half of the fused gate_up projection


class Model(torch.nn.Module):
    """vLLM's `SiluAndMul`: computed in fp32, rounded once to the input dtype."""

    def forward(self, x):
        d = x.shape[-1] // 2
        gate, up = x[..., :d].float(), x[..., d:].float()
        return (torch.nn.functional.silu(gate) * up).to(x.dtype)


def get_inputs():
    return [torch.randn(num_tokens, 2 * intermediate_size).to(torch.bfloat16)]


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; an odd width (no power-of-two block divides it); large gate values.
    return [[torch.randn(1, 2 * intermediate_size).to(torch.bfloat16)],
            [torch.randn(13, 2 * 4097).to(torch.bfloat16)],
            [torch.randn(6, 2 * 1000).mul(8).to(torch.bfloat16)]]
