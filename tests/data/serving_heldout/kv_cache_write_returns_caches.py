"""vLLM `reshape_and_cache_flash` as a Python op that writes the caches in place and returns them too."""
import torch

OPFORGE = dict(name="kv_cache_write_returns_caches", dtypes=["bfloat16", "int64"], family="serving",
               tags=["serving", "kv-cache", "paged", "scatter", "in-place", "bf16"],
               mutates=["key_cache", "value_cache"], fixed_sizes=["block_size", "head_size"])

num_tokens = 24
num_blocks = 6
block_size = 8
num_kv_heads = 2
head_size = 32


class Model(torch.nn.Module):
    def forward(self, key, value, key_cache, value_cache, slot_mapping):
        # key/value [num_tokens, num_kv_heads, head_size]; caches [num_blocks, block_size, num_kv_heads, head_size]
        block_idx = slot_mapping // key_cache.shape[1]
        block_off = slot_mapping % key_cache.shape[1]
        key_cache[block_idx, block_off] = key
        value_cache[block_idx, block_off] = value
        return key_cache, value_cache


def _inputs(tokens, blocks):
    slots = torch.randperm(blocks * block_size)[:tokens]
    return [torch.randn(tokens, num_kv_heads, head_size, dtype=torch.bfloat16),
            torch.randn(tokens, num_kv_heads, head_size, dtype=torch.bfloat16),
            torch.zeros(blocks, block_size, num_kv_heads, head_size, dtype=torch.bfloat16),
            torch.zeros(blocks, block_size, num_kv_heads, head_size, dtype=torch.bfloat16),
            slots]


def get_inputs():
    return _inputs(num_tokens, num_blocks)


def get_init_inputs():
    return []


def get_input_variants():
    return [_inputs(1, 2), _inputs(13, 3)]
