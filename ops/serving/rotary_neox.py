"""vLLM `rotary_embedding` (is_neox_style=True, Llama/NeoX): rotate the halves of each head's first rot_dim dims."""
import torch

OPFORGE = dict(name="rotary_neox", dtypes=["bfloat16", "int64"], family="serving",
               tags=["serving", "rotary", "rope", "neox", "positions", "gather", "bf16"],
               # head geometry and the cache's length are the model's, not problem sizes
               fixed_sizes=["head_size", "rotary_dim", "max_position"])

num_tokens = 1024
num_heads = 32  # Llama-3-8B: 32 query heads, 8 KV heads, head 128, full rotary
num_kv_heads = 8
head_size = 128
rotary_dim = 128
max_position = 8192


class Model(torch.nn.Module):
    """vLLM's `RotaryEmbedding.forward_native`: cos_sin_cache [max_position, rotary_dim] holds cos in its
    first half and sin in its second; q/k are [num_tokens, heads * head_size]; dims past rotary_dim pass.
    The rotation is computed in fp32 and rounded once to the input dtype."""

    def __init__(self, head_size, rotary_dim, max_position, base=500000.0):
        super().__init__()
        self.head_size, self.rotary_dim = head_size, rotary_dim
        inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float32) / rotary_dim))
        freqs = torch.outer(torch.arange(max_position, dtype=torch.float32), inv_freq)
        cache = torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(torch.bfloat16)
        self.register_buffer("cos_sin_cache", cache, persistent=True)

    def _rotate(self, x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)

    def _embed(self, x, cos, sin):
        shape, dtype = x.shape, x.dtype
        x = x.reshape(x.shape[0], -1, self.head_size).float()
        rot = self._rotate(x[..., : self.rotary_dim], cos, sin)
        return torch.cat((rot, x[..., self.rotary_dim:]), dim=-1).reshape(shape).to(dtype)

    def forward(self, positions, query, key):
        cos, sin = self.cos_sin_cache.index_select(0, positions).float().chunk(2, dim=-1)
        cos, sin = cos.unsqueeze(-2), sin.unsqueeze(-2)  # broadcast over heads
        return self._embed(query, cos, sin), self._embed(key, cos, sin)


def _inputs(tokens, positions=None):
    if positions is None:
        positions = torch.randint(0, max_position, (tokens,), dtype=torch.int64)
    return [positions,
            torch.randn(tokens, num_heads * head_size).to(torch.bfloat16),
            torch.randn(tokens, num_kv_heads * head_size).to(torch.bfloat16)]


def get_inputs():
    return _inputs(num_tokens)


def get_init_inputs():
    return [head_size, rotary_dim, max_position]


def get_input_variants():
    # Decode at the last position; a ragged prefill of one sequence (positions 0..n-1) like vLLM's.
    return [_inputs(1, torch.tensor([max_position - 1])), _inputs(37, torch.arange(37))]
