"""vLLM `rotary_embedding` (is_neox_style=False, GPT-J): rotate the (even, odd) pairs of the first rot_dim dims."""
import torch

OPFORGE = dict(name="rotary_gptj", dtypes=["bfloat16", "float32", "int64"], family="serving",
               tags=["serving", "rotary", "rope", "gptj", "interleaved", "positions", "gather",
                     "bf16"],
               implements=["vllm:rotary_embedding:gptj"],  # RotaryEmbedding with is_neox_style=False
               fixed_sizes=["max_position"])  # the cache's length is the model's, not a problem size

num_tokens = 1024
num_heads = 16  # GPT-J-style interleaved pairs, full rotary on 128-dim heads
num_kv_heads = 16
head_size = 128
max_position = 2048


class Model(torch.nn.Module):
    """vLLM 0.32's `RotaryEmbedding.forward_static` (GPT-J style), out of place: positions [T] int64,
    query [T, Hq, D], key [T, Hk, D], cos_sin_cache [max_position, R] in the query's dtype (vLLM casts its
    fp32 cache to it) with cos in its first R/2 columns and sin in the rest. The (even, odd) pairs of the
    first R <= D dims of each head are rotated, in the query's dtype like vLLM's native path; dims past R
    pass through. D and R come from the shapes. Returns (query', key'). This spec covers full rotary
    (R == D) only and refuses partial rotary (GPT-J's own 64 of 256), so an engine falls back for it: the
    expert's kernels are not yet generic in R."""

    def forward(self, positions, query, key, cos_sin_cache):
        rotary = cos_sin_cache.shape[-1]
        if rotary != query.shape[-1] or rotary != key.shape[-1]:
            raise ValueError(f"partial rotary ({rotary} of {query.shape[-1]} dims) is not covered by this spec")
        cos, sin = cos_sin_cache.index_select(0, positions).chunk(2, dim=-1)
        cos, sin = cos.unsqueeze(-2).to(query.dtype), sin.unsqueeze(-2).to(query.dtype)  # over heads

        def embed(x):
            x1, x2 = x[..., 0:rotary:2], x[..., 1:rotary:2]
            rot = torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)
            return torch.cat((rot, x[..., rotary:]), dim=-1)

        return embed(query), embed(key)


def cos_sin_cache(rotary, max_pos=max_position, base=10000.0, dtype=torch.bfloat16):
    """vLLM's `_compute_cos_sin_cache`: fp32, then cast to the model's dtype."""
    inv_freq = 1.0 / (base ** (torch.arange(0, rotary, 2, dtype=torch.float) / rotary))
    freqs = torch.einsum("i,j -> ij", torch.arange(max_pos, dtype=torch.float), inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(dtype)


def _inputs(tokens, heads=num_heads, kv_heads=num_kv_heads, head=head_size, rotary=None,
            dtype=torch.bfloat16, positions=None):
    if positions is None:
        positions = torch.randint(0, max_position, (tokens,), dtype=torch.int64)
    return [positions, torch.randn(tokens, heads, head).to(dtype), torch.randn(tokens, kv_heads, head).to(dtype),
            cos_sin_cache(rotary or head, dtype=dtype)]


def get_inputs():
    return _inputs(num_tokens)


def get_init_inputs():
    return []


def get_input_variants():
    # Decode at the last position; a ragged prefill of one sequence (positions 0..n-1) like vLLM's; 64-dim
    # heads with grouped KV; fp32 (vLLM on a CPU runs float32 models) at head sizes 32 (4 query, 2 KV
    # heads), 64 and 128.
    return [_inputs(1, positions=torch.tensor([max_position - 1])), _inputs(7, positions=torch.arange(7)),
            _inputs(9, 8, 2, 64),
            _inputs(11, 4, 2, 32, dtype=torch.float32), _inputs(6, 8, 4, 64, dtype=torch.float32),
            _inputs(5, 4, 1, 128, dtype=torch.float32)]
