"""A paged KV cache in the heads-first (HND) layout FlashInfer and some vLLM backends use: each
block [num_heads, block_size, head_size], so a token's heads land block_size rows apart. Keys are
written in place at their slots, padding slots (-1) skipped."""
import torch

OPFORGE = dict(name="paged_cache_hnd", dtypes=["float16", "int64"], family="serving",
               tags=["serving", "kv-cache", "paged", "scatter", "index-put", "in-place", "slot-mapping", "fp16"],
               mutates=["cache"],
               fixed_sizes=["block_size", "head_size"])

num_tokens = 96
num_heads = 8
head_size = 64
block_size = 32
num_blocks = 2 * ((num_tokens + block_size - 1) // block_size)


class Model(torch.nn.Module):
    """key [num_tokens, num_heads, head_size]; cache [num_blocks, num_heads, block_size, head_size];
    slot_mapping [num_tokens] int64 (-1: a padding token)."""

    def forward(self, key, cache, slot_mapping):
        block = cache.shape[2]
        keep = slot_mapping >= 0
        slots = slot_mapping[keep]
        cache[slots // block, :, slots % block] = key[keep]


def _write(tokens, blocks, padding):
    slot_mapping = torch.randperm(blocks * block_size)[:tokens]
    slot_mapping[torch.randperm(tokens)[:padding]] = -1
    return [torch.randn(tokens, num_heads, head_size).to(torch.float16),
            torch.randn(blocks, num_heads, block_size, head_size).to(torch.float16),  # stale contents
            slot_mapping]


def get_inputs():
    return _write(num_tokens, num_blocks, num_tokens // 6)


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; every token padding; a full cache.
    return [_write(1, 1, 0), _write(5, 2, 5), [*_write(block_size, 1, 0)[:2], torch.randperm(block_size)]]
