"""vLLM `scaled_fp8_quant(use_per_token_if_dynamic=True)`: per-token absmax / 448 scales, x / scale saturated
to e4m3 -> (q, scales)."""
import torch

OPFORGE = dict(name="per_token_fp8_quant", dtypes=["bfloat16"], family="serving",
               tags=["serving", "quantization", "fp8", "e4m3", "per-token", "absmax", "row", "saturate",
                     "fp8-output", "bf16"])

num_tokens = 2048
hidden_size = 4096

FP8_MAX = 448.0  # float8_e4m3fn's largest finite value
MIN_SCALE = 1.0 / (FP8_MAX * 512.0)  # vLLM's floor on a dynamic scale (an all-zero row)


class Model(torch.nn.Module):
    """x [num_tokens, hidden] -> (q float8_e4m3fn [num_tokens, hidden], scales float32 [num_tokens, 1]):
    scale = max(absmax(row) / 448, 1 / (448 * 512)), q = clamp(x / scale, -448, 448) rounded to nearest even
    e4m3, all in fp32 (q compares exactly, so the quotient is IEEE x / scale)."""

    def forward(self, x):
        x = x.float()
        scales = (x.abs().amax(dim=-1, keepdim=True) / FP8_MAX).clamp(min=MIN_SCALE)
        q = (x / scales).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        return q, scales


def get_inputs():
    return [torch.randn(num_tokens, hidden_size).to(torch.bfloat16)]


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; a ragged batch with an odd width; rows of very different magnitudes, one of them
    # all zeros (the scale's floor), and an outlier channel.
    spread = torch.randn(9, 1000) * torch.logspace(-4, 2, 9).unsqueeze(1)
    spread[:, 17] *= 40
    spread[3] = 0.0
    return [[torch.randn(1, hidden_size).to(torch.bfloat16)], [torch.randn(37, 4097).to(torch.bfloat16)],
            [spread.to(torch.bfloat16)]]
