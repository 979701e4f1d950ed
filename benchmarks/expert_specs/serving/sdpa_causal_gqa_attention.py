"""HF transformers' eager attention (`eager_attention_forward` with `repeat_kv`): dense [batch, heads,
seq, head_dim] fp16, a causal mask, GQA by expanding the KV heads, softmax in fp32 cast back to fp16."""
import torch

OPFORGE = dict(name="sdpa_causal_gqa_attention", dtypes=["float16"], family="serving",
               tags=["serving", "attention", "prefill", "causal", "gqa", "softmax", "fp16", "hf"],
               fixed_sizes=["head_dim"],  # the model's head geometry, not a problem size
               # fp16 scores and probabilities: this reference is itself 5.6% off float64 on elements
               # above fp16's small-element floor (4.2% on the 65-token variant); rtol 6e-3 makes that
               # check's allowance 6%, and the atol follows the reference's 8.7e-3 x rms error.
               atol=5e-3, rtol=6e-3)

batch_size = 2
seq_len = 256
num_kv_heads = 2
num_heads = 8
head_dim = 64


class Model(torch.nn.Module):
    """query [batch, num_heads, seq, head_dim]; key/value [batch, num_kv_heads, seq, head_dim]; query
    head h reads KV head h // (num_heads // num_kv_heads). Output [batch, num_heads, seq, head_dim]."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, query, key, value):
        b, kv_heads, s, d = key.shape
        group = query.shape[1] // kv_heads
        key = key[:, :, None, :, :].expand(b, kv_heads, group, s, d).reshape(b, kv_heads * group, s, d)
        value = value[:, :, None, :, :].expand(b, kv_heads, group, s, d).reshape(b, kv_heads * group, s, d)
        scores = torch.matmul(query, key.transpose(2, 3)) * self.scale
        position = torch.arange(s, device=query.device)
        scores = scores.masked_fill(position[None, :] > position[:, None], float("-inf"))
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
        return torch.matmul(probs, value)


def _qkv(batch, seq):
    return [torch.randn(batch, num_heads, seq, head_dim).half(),
            torch.randn(batch, num_kv_heads, seq, head_dim).half(),
            torch.randn(batch, num_kv_heads, seq, head_dim).half()]


def get_inputs():
    return _qkv(batch_size, seq_len)


def get_init_inputs():
    return [head_dim ** -0.5]


def get_input_variants():
    # One token; a length off a 64-row tile's edge.
    return [_qkv(1, 1), _qkv(3, 65)]
