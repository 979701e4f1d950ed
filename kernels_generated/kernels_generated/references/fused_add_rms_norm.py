"""vLLM `fused_add_rms_norm(x, residual, weight, epsilon)`: residual += x, then RMSNorm of the new residual."""
import torch

OPFORGE = dict(name="fused_add_rms_norm", dtypes=["bfloat16", "float32"], family="serving",
               tags=["serving", "norm", "rmsnorm", "row", "affine", "residual", "fused", "bf16"],
               implements=["vllm:fused_add_rms_norm"])  # vllm.ir.ops.fused_add_rms_norm, RMSNorm(x, residual)

num_tokens = 4096
hidden_size = 4096  # Llama-3-8B


class Model(torch.nn.Module):
    """vLLM 0.32's `ir.ops.fused_add_rms_norm` with a weight: the add in fp32, rounded once to x's dtype as
    the new residual; the statistics and the scaling in fp32, the normalised x rounded to the weight's
    dtype, multiplied by the weight in that dtype, then rounded to x's dtype. Returns (normed, new
    residual). The weight [hidden] is an input, as in vLLM's op, so a caller passes each layer's own."""

    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, residual, weight):
        dtype = x.dtype
        h = x.float() + residual.float()
        new_residual = h.to(dtype)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (h.to(weight.dtype) * weight).to(dtype), new_residual


def _pair(tokens, hidden=hidden_size, scale=1.0, dtype=torch.bfloat16):
    return [torch.randn(tokens, hidden).mul(scale).to(dtype),
            torch.randn(tokens, hidden).mul(scale).to(dtype),
            (1.0 + 0.1 * torch.randn(hidden)).to(dtype)]


def get_inputs():
    return _pair(num_tokens)


def get_init_inputs():
    return [1e-6]


def get_input_variants():
    # Decode (one token), a ragged batch with an odd hidden size, and activations 8x larger (the residual
    # stream grows with depth); the same in fp32 (vLLM on a CPU runs float32 models), with a small hidden size.
    return [_pair(1), _pair(37, 1000), _pair(5, scale=8.0),
            _pair(7, dtype=torch.float32), _pair(3, 128, scale=8.0, dtype=torch.float32)]
