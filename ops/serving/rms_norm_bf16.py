"""vLLM `rms_norm(out, input, weight, epsilon)`: RMSNorm over the hidden dim with the weight as an argument, bf16."""
import torch

OPFORGE = dict(name="rms_norm_bf16", dtypes=["bfloat16"], family="serving",
               tags=["serving", "norm", "rmsnorm", "row", "affine", "bf16"])

num_tokens = 4096
hidden_size = 4096  # Llama-3-8B


class Model(torch.nn.Module):
    """vLLM's `RMSNorm.forward_native` without a residual: x [num_tokens, hidden] and weight [hidden] in
    the activations' dtype, the statistics and the scaling in fp32, one rounding. The weight is an input,
    as in vLLM's custom op, so a caller passes each layer's own."""

    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        h = x.float()
        normed = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (normed * weight.float()).to(x.dtype)


def _operands(tokens, hidden):
    return [torch.randn(tokens, hidden).to(torch.bfloat16), (1.0 + 0.1 * torch.randn(hidden)).to(torch.bfloat16)]


def get_inputs():
    return _operands(num_tokens, hidden_size)


def get_init_inputs():
    return [1e-6]


def get_input_variants():
    # One decode token; a ragged batch with an odd hidden size; activations 8x larger.
    big = _operands(5, hidden_size)
    big[0] = (big[0].float() * 8).to(torch.bfloat16)
    return [_operands(1, hidden_size), _operands(37, 1000), big]
