"""vLLM `cutlass_scaled_mm` (int8 W8A8): (A_int8 @ B_int8) * scale_a[token] * scale_b[channel] + bias, out bf16."""
import torch

OPFORGE = dict(name="int8_gemm_scaled", dtypes=["bfloat16", "float32", "int8"], family="serving",
               tags=["serving", "matmul", "gemm", "int8", "quantization", "scaled-mm", "epilogue", "bias", "bf16"])

M = 256  # tokens
K = 4096
N = 4096

_OUT_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


class Model(torch.nn.Module):
    """a int8 [M, K], b int8 [K, N], scale_a float32 [M, 1] (per token), scale_b float32 [1, N] (per output
    channel), bias [N] in the output dtype. The int32 accumulation of int8 products is exact; the reference
    accumulates in fp32 (exact while |partial sums| < 2^24, within the output's rounding past that), applies
    the scales and bias in fp32 and rounds once to out_dtype."""

    def __init__(self, out_dtype="bfloat16"):
        super().__init__()
        if out_dtype not in _OUT_DTYPES:
            raise ValueError(f"out_dtype must be one of {sorted(_OUT_DTYPES)}, got {out_dtype!r}")
        self.out_dtype = _OUT_DTYPES[out_dtype]

    def forward(self, a, b, scale_a, scale_b, bias):
        acc = torch.mm(a.float(), b.float())
        return (acc * scale_a * scale_b + bias.float()).to(self.out_dtype)


def _operands(m, k, n):
    return [torch.randint(-127, 128, (m, k), dtype=torch.int8),
            torch.randint(-127, 128, (k, n), dtype=torch.int8),
            torch.rand(m, 1) * 0.02 + 1e-3,  # absmax / 127 of activations of magnitude ~1
            torch.rand(1, n) * 0.002 + 1e-4,
            torch.randn(n).to(torch.bfloat16)]


def get_inputs():
    return _operands(M, K, N)


def get_init_inputs():
    return ["bfloat16"]


def get_input_variants():
    # One decode token; sizes no power-of-two tile divides (ragged M, N and K).
    return [_operands(1, K, N), _operands(37, 1000, 333)]
