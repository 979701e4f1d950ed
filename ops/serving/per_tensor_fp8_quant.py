"""vLLM `scaled_fp8_quant` (dynamic, per tensor): scale = absmax / 448, x / scale saturated to e4m3 -> (q, scale)."""
import torch

OPFORGE = dict(name="per_tensor_fp8_quant", dtypes=["bfloat16"], family="serving",
               tags=["serving", "quantization", "fp8", "e4m3", "per-tensor", "absmax", "reduction", "saturate",
                     "fp8-output", "bf16"])

num_tokens = 2048
hidden_size = 4096

FP8_MAX = 448.0  # float8_e4m3fn's largest finite value
MIN_SCALE = 1.0 / (FP8_MAX * 512.0)  # vLLM's floor on a dynamic scale (an all-zero tensor)


class Model(torch.nn.Module):
    """x [num_tokens, hidden] -> (q float8_e4m3fn [num_tokens, hidden], scale float32 [1]):
    scale = max(absmax(x) / 448, 1 / (448 * 512)), q = clamp(x / scale, -448, 448) rounded to nearest even
    e4m3, all in fp32 (q compares exactly, so the quotient is IEEE x / scale)."""

    def forward(self, x):
        x = x.float()
        scale = (x.abs().amax() / FP8_MAX).clamp(min=MIN_SCALE)
        q = (x / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        return q, scale.reshape(1)


def get_inputs():
    return [torch.randn(num_tokens, hidden_size).to(torch.bfloat16)]


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; a ragged batch with an odd width; tiny activations with one large outlier
    # (most values land in e4m3's subnormals).
    tiny = torch.randn(9, 1000) * 1e-3
    tiny[4, 17] = 30.0
    return [[torch.randn(1, hidden_size).to(torch.bfloat16)], [torch.randn(37, 4097).to(torch.bfloat16)],
            [tiny.to(torch.bfloat16)]]
