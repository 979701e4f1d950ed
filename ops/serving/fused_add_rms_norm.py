"""vLLM `fused_add_rms_norm`: residual += x, then RMSNorm of the new residual; returns (normed, residual)."""
import torch

OPFORGE = dict(name="fused_add_rms_norm", dtypes=["bfloat16"], family="serving",
               tags=["serving", "norm", "rmsnorm", "row", "affine", "residual", "fused", "bf16"])

num_tokens = 4096
hidden_size = 4096  # Llama-3-8B


class Model(torch.nn.Module):
    """vLLM's `RMSNorm.forward_native` with a residual: the add and the norm in fp32, one rounding each."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter((1.0 + 0.1 * torch.randn(hidden_size)).to(torch.bfloat16))
        self.eps = eps

    def forward(self, x, residual):
        dtype = x.dtype
        h = x.float() + residual.float()
        new_residual = h.to(dtype)
        normed = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (normed * self.weight.float()).to(dtype), new_residual


def _pair(tokens):
    return [torch.randn(tokens, hidden_size).to(torch.bfloat16), torch.randn(tokens, hidden_size).to(torch.bfloat16)]


def get_inputs():
    return _pair(num_tokens)


def get_init_inputs():
    return [hidden_size]


def get_input_variants():
    # Decode (one token), a ragged batch, and activations 8x larger (the residual stream grows with depth).
    return [_pair(1), _pair(37), [torch.randn(5, hidden_size).mul(8).to(torch.bfloat16),
                                  torch.randn(5, hidden_size).mul(8).to(torch.bfloat16)]]
