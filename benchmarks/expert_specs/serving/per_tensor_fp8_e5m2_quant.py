"""Dynamic per-tensor FP8 quant to e5m2 (wider range, for gradients or KV caches): scale = absmax / 57344,
x / scale in float8_e5m2 -> (q, scale)."""
import torch

OPFORGE = dict(name="per_tensor_fp8_e5m2_quant", dtypes=["float16"], family="serving",
               tags=["serving", "quantization", "fp8", "e5m2", "per-tensor", "absmax", "reduction", "saturate",
                     "fp8-output", "fp16"])

num_tokens = 2048
hidden_size = 4096

E5M2_MAX = 57344.0  # float8_e5m2's largest finite value


class Model(torch.nn.Module):
    """x [num_tokens, hidden] -> (q float8_e5m2 [num_tokens, hidden], scale float32 [1]):
    scale = max(absmax(x) / 57344, 1e-12), q = clamp(x / scale, -57344, 57344) rounded to nearest even
    e5m2 (q compares exactly)."""

    def forward(self, x):
        x = x.float()
        scale = torch.clamp(torch.amax(torch.abs(x)) / E5M2_MAX, min=1e-12)
        q = torch.clamp(x / scale, min=-E5M2_MAX, max=E5M2_MAX).to(torch.float8_e5m2)
        return q, scale.view(1)


def get_inputs():
    return [torch.randn(num_tokens, hidden_size).to(torch.float16)]


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; a ragged batch with an odd width; tiny activations with one outlier (most values
    # in e5m2's subnormals, below 2^-14 of the scale).
    tiny = torch.randn(9, 1000) * 1e-4
    tiny[2, 999] = -200.0
    return [[torch.randn(1, hidden_size).to(torch.float16)], [torch.randn(37, 4097).to(torch.float16)],
            [tiny.to(torch.float16)]]
