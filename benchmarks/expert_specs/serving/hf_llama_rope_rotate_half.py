"""HF transformers Llama `apply_rotary_pos_emb`: `rotate_half` by `cat((-x2, x1), -1)`, cos/sin tables
gathered by `position_ids` with advanced indexing, q/k in the [B, H, S, D] layout attention reads, fp16."""
import torch

OPFORGE = dict(name="hf_llama_rope_rotate_half", dtypes=["float16", "int64"], family="serving",
               tags=["serving", "rotary", "rope", "rotate-half", "hf", "positions", "gather", "fp16"],
               # head geometry and the table's length are the model's, not problem sizes
               fixed_sizes=["head_dim", "max_position"])

batch = 2
seq_len = 256
num_heads = 32  # Llama-2-7B: 32 heads of 128, 32 KV heads
num_kv_heads = 32
head_dim = 128
max_position = 4096


def rotate_half(x):
    """Rotates half the hidden dims of the input (transformers.models.llama.modeling_llama)."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class Model(torch.nn.Module):
    """cos/sin tables [max_position, head_dim] (the frequencies repeated twice, as HF's
    LlamaRotaryEmbedding builds them); q [B, H, S, D], k [B, H_kv, S, D], position_ids [B, S].
    Computed in fp16 as HF runs it in a half-precision model."""

    def __init__(self, head_dim, max_position, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        freqs = torch.outer(torch.arange(max_position, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        # persistent (HF's are not): the harness hands a candidate the reference's state_dict
        self.register_buffer("cos_cached", emb.cos().to(torch.float16))
        self.register_buffer("sin_cached", emb.sin().to(torch.float16))

    def forward(self, q, k, position_ids):
        cos = self.cos_cached[position_ids].unsqueeze(1)  # [B, 1, S, D]: broadcast over heads
        sin = self.sin_cached[position_ids].unsqueeze(1)
        q_embed = (q * cos) + (rotate_half(q) * sin)
        k_embed = (k * cos) + (rotate_half(k) * sin)
        return q_embed, k_embed


def _inputs(b, s, offset=0):
    positions = (torch.arange(s, dtype=torch.int64) + offset).expand(b, s).contiguous()
    return [torch.randn(b, num_heads, s, head_dim).to(torch.float16),
            torch.randn(b, num_kv_heads, s, head_dim).to(torch.float16), positions]


def get_inputs():
    return _inputs(batch, seq_len)


def get_init_inputs():
    return [head_dim, max_position]


def get_input_variants():
    # One decode step per sequence at the table's end; a short prefill after a cached prefix.
    return [_inputs(4, 1, max_position - 1), _inputs(1, 37, 100)]
