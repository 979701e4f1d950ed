"""vLLM `scaled_int8_quant(x, scale)` (static, symmetric): a calibrated per-tensor scale given as an input;
round half to even and saturate to int8."""
import torch

OPFORGE = dict(name="static_int8_quant", dtypes=["bfloat16"], family="serving",
               tags=["serving", "quantization", "int8", "static", "per-tensor", "round", "saturate",
                     "int8-output", "bf16"])

num_tokens = 2048
hidden_size = 4096


class Model(torch.nn.Module):
    """x [num_tokens, hidden], scale float32 [1] -> q int8 [num_tokens, hidden]:
    q = clamp(round_half_even(x / scale), -128, 127) in fp32 (q compares exactly)."""

    def forward(self, x, scale):
        q = torch.round(x.float() / scale)
        return q.clamp(-128, 127).to(torch.int8)


def get_inputs():
    return [torch.randn(num_tokens, hidden_size).to(torch.bfloat16), torch.tensor([0.02])]


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; a ragged batch with an odd width; a scale calibrated too small, so many values
    # saturate at both ends.
    return [[torch.randn(1, hidden_size).to(torch.bfloat16), torch.tensor([0.03])],
            [torch.randn(37, 4097).to(torch.bfloat16), torch.tensor([0.0173])],
            [(torch.randn(9, 1000) * 4).to(torch.bfloat16), torch.tensor([0.005])]]
