"""vLLM `UnquantizedLinearMethod.apply`: F.linear(x, weight) in bf16 (QKV, output, gate_up and down projections)."""
import torch

OPFORGE = dict(name="linear_bf16", dtypes=["bfloat16"], family="serving",
               tags=["serving", "matmul", "gemm", "linear", "projection", "bf16"])

num_tokens = 256
in_features = 4096
out_features = 6144  # Llama-3-8B's fused QKV: (32 + 2 * 8) heads * 128


class Model(torch.nn.Module):
    """x [num_tokens, in] @ weight[out, in].T in bf16 with fp32 accumulation and one rounding (cuBLAS's
    contract). The weight is an input, as in an engine, so one op serves every projection of every layer."""

    def forward(self, x, weight):
        return torch.nn.functional.linear(x, weight)


def _operands(tokens, k, n):
    return [torch.randn(tokens, k).to(torch.bfloat16), (torch.randn(n, k) * k ** -0.5).to(torch.bfloat16)]


def get_inputs():
    return _operands(num_tokens, in_features, out_features)


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; sizes no power-of-two tile divides (ragged tokens, K and N).
    return [_operands(1, in_features, out_features), _operands(37, 1000, 333)]
