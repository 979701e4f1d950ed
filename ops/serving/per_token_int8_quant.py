"""vLLM `scaled_int8_quant` (dynamic, symmetric): per-token absmax scale, round, clamp to int8; returns (q, scales)."""
import torch

OPFORGE = dict(name="per_token_int8_quant", dtypes=["float16"], family="serving",
               tags=["serving", "quantization", "int8", "per-token", "absmax", "row", "round", "int8-output", "fp16"])

num_tokens = 2048
hidden_size = 4096


class Model(torch.nn.Module):
    """x [num_tokens, hidden] -> (q int8 [num_tokens, hidden], scales float32 [num_tokens, 1]):
    scale = absmax(row) / 127 and q = clamp(round_half_even(x / scale), -127, 127), all in fp32 (q compares
    exactly, so the quotient is IEEE x / scale, not x * (127 / absmax)); an all-zero row has scale 0, q 0."""

    def forward(self, x):
        x = x.float()
        scales = x.abs().amax(dim=-1, keepdim=True) / 127.0
        q = torch.where(scales > 0, x / scales, torch.zeros_like(x))
        return torch.round(q).clamp(-127, 127).to(torch.int8), scales


def get_inputs():
    return [torch.randn(num_tokens, hidden_size).to(torch.float16)]


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; a ragged batch with an odd width; rows of very different magnitudes and an outlier
    # channel (the activations that make per-token scales worth having).
    spread = torch.randn(9, 1000) * torch.logspace(-3, 2, 9).unsqueeze(1)
    spread[:, 17] *= 40
    return [[torch.randn(1, hidden_size).to(torch.float16)], [torch.randn(37, 4097).to(torch.float16)],
            [spread.to(torch.float16)]]
