"""vLLM `cutlass_scaled_mm` (FP8 W8A8, per-tensor): (A_e4m3 @ B_e4m3) * scale_a * scale_b, out bf16."""
import torch

OPFORGE = dict(name="fp8_gemm_scaled", dtypes=["float8_e4m3fn", "float32"], family="serving",
               tags=["serving", "matmul", "gemm", "fp8", "e4m3", "quantization", "scaled-mm", "epilogue", "bf16"],
               # e4m3 operands have a range (|x| <= 448) that scaling them leaves: their scale is scale_a/b
               stress={"scaled": False})

M = 256  # tokens
K = 4096
N = 4096

_OUT_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


class Model(torch.nn.Module):
    """a float8_e4m3fn [M, K], b float8_e4m3fn [K, N], scale_a and scale_b float32 [1] (per tensor):
    fp32 accumulation of the products (as FP8 tensor cores do), both scales applied in fp32, one rounding
    to out_dtype (torch._scaled_mm's contract on a GPU)."""

    def __init__(self, out_dtype="bfloat16"):
        super().__init__()
        if out_dtype not in _OUT_DTYPES:
            raise ValueError(f"out_dtype must be one of {sorted(_OUT_DTYPES)}, got {out_dtype!r}")
        self.out_dtype = _OUT_DTYPES[out_dtype]

    def forward(self, a, b, scale_a, scale_b):
        acc = torch.mm(a.float(), b.float())
        return (acc * (scale_a * scale_b)).to(self.out_dtype)


def _operands(m, k, n):
    return [torch.randn(m, k).mul(64).clamp(-448, 448).to(torch.float8_e4m3fn),  # quantised activations
            torch.randn(k, n).mul(64).clamp(-448, 448).to(torch.float8_e4m3fn),  # quantised weights
            torch.rand(1) * 0.02 + 1e-3,
            torch.rand(1) * 0.002 + 1e-4]


def get_inputs():
    return _operands(M, K, N)


def get_init_inputs():
    return ["bfloat16"]


def get_input_variants():
    # One decode token; sizes no power-of-two tile divides (ragged M, N and K).
    return [_operands(1, K, N), _operands(37, 1000, 333)]
