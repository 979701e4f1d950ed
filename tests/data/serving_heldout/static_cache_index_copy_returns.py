"""HF `StaticCache.update`: `index_copy_` the step's keys/values into the cache and return what it returns."""
import torch

OPFORGE = dict(name="static_cache_index_copy_returns", dtypes=["bfloat16", "int64"], family="serving",
               tags=["serving", "kv-cache", "index-copy", "in-place", "bf16"],
               mutates=["k_out", "v_out"], fixed_sizes=["num_heads", "head_dim"])

batch = 2
num_heads = 2
max_cache_len = 32
new_tokens = 4
head_dim = 16


class Model(torch.nn.Module):
    def forward(self, k_out, v_out, key_states, value_states, cache_position):
        # [batch, num_heads, max_cache_len, head_dim] caches, [batch, num_heads, new, head_dim] states
        return k_out.index_copy_(2, cache_position, key_states), v_out.index_copy_(2, cache_position, value_states)


def _inputs(b, length, new, start):
    return [torch.randn(b, num_heads, length, head_dim, dtype=torch.bfloat16),
            torch.randn(b, num_heads, length, head_dim, dtype=torch.bfloat16),
            torch.randn(b, num_heads, new, head_dim, dtype=torch.bfloat16),
            torch.randn(b, num_heads, new, head_dim, dtype=torch.bfloat16),
            torch.arange(start, start + new)]


def get_inputs():
    return _inputs(batch, max_cache_len, new_tokens, 8)


def get_init_inputs():
    return []


def get_input_variants():
    return [_inputs(1, 17, 1, 16), _inputs(3, 9, 9, 0)]
