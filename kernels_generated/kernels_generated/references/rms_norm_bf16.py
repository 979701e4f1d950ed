"""vLLM `rms_norm(x, weight, epsilon)`: RMSNorm over the hidden dim with the weight as an argument, bf16 and fp32."""
import torch

OPFORGE = dict(name="rms_norm_bf16", dtypes=["bfloat16", "float32"], family="serving",
               tags=["serving", "norm", "rmsnorm", "row", "affine", "bf16"],
               implements=["vllm:rms_norm"])  # the engine op it stands for (vllm.ir.ops.rms_norm, RMSNorm)

num_tokens = 4096
hidden_size = 4096  # Llama-3-8B


class Model(torch.nn.Module):
    """vLLM 0.32's `ir.ops.rms_norm` with a weight: x [num_tokens, hidden], weight [hidden]; the statistics
    and the scaling in fp32, the normalised x rounded to the weight's dtype, multiplied by the weight in
    that dtype, then rounded to x's dtype (two roundings in bf16). The weight is an input, as in vLLM's
    op, so a caller passes each layer's own."""

    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return (h.to(weight.dtype) * weight).to(x.dtype)


def _operands(tokens, hidden, dtype=torch.bfloat16, scale=1.0):
    return [torch.randn(tokens, hidden).mul(scale).to(dtype), (1.0 + 0.1 * torch.randn(hidden)).to(dtype)]


def get_inputs():
    return _operands(num_tokens, hidden_size)


def get_init_inputs():
    return [1e-6]


def get_input_variants():
    # One decode token; a ragged batch with an odd hidden size; activations 8x larger; the same in fp32
    # (vLLM on a CPU runs float32 models), with a small hidden size.
    return [_operands(1, hidden_size), _operands(37, 1000), _operands(5, hidden_size, scale=8.0),
            _operands(7, hidden_size, torch.float32), _operands(3, 128, torch.float32, scale=8.0)]
