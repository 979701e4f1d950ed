"""vLLM `scaled_int8_quant(symmetric=False)` (dynamic, asymmetric): per-token min/max -> scale and zero point,
round, clamp to int8; returns (q, scales, azp)."""
import torch

OPFORGE = dict(name="per_token_asym_int8_quant", dtypes=["float16"], family="serving",
               tags=["serving", "quantization", "int8", "per-token", "asymmetric", "zero-point", "row", "round",
                     "int8-output", "fp16"])

num_tokens = 2048
hidden_size = 4096

MIN_SCALE = 1e-10  # a floor on the scale: an all-zero row gets azp = q = -128, not 0 / 0


class Model(torch.nn.Module):
    """x [num_tokens, hidden] -> (q int8, scales float32 [num_tokens, 1], azp int32 [num_tokens, 1]):
    scale = max((max - min) / 255, 1e-10), azp = round(-128 - min / scale), q = clamp(round(x / scale) + azp, -128, 127),
    all in fp32 with rounding half to even (q and azp compare exactly)."""

    def forward(self, x):
        x = x.float()
        x_max = x.amax(dim=-1, keepdim=True)
        x_min = x.amin(dim=-1, keepdim=True)
        scales = ((x_max - x_min) / 255.0).clamp(min=MIN_SCALE)
        azp = torch.round(-128.0 - x_min / scales)
        q = (torch.round(x / scales) + azp).clamp(-128, 127).to(torch.int8)
        return q, scales, azp.to(torch.int32)


def get_inputs():
    return [torch.randn(num_tokens, hidden_size).to(torch.float16)]


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; a ragged batch with an odd width; rows shifted off zero (relu-like activations,
    # where the zero point pays off) and of very different magnitudes.
    shifted = torch.randn(9, 1000).abs() * torch.logspace(-2, 2, 9).unsqueeze(1) + 0.5
    return [[torch.randn(1, hidden_size).to(torch.float16)], [torch.randn(37, 4097).to(torch.float16)],
            [shifted.to(torch.float16)]]
