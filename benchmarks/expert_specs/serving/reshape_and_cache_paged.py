"""vLLM `reshape_and_cache` (the original paged layout, not the flash one): each token's key and
value written in place at its slot; the key cache splits head_size into chunks of x elements (16
bytes) stored innermost, the value cache keeps block positions innermost."""
import torch

OPFORGE = dict(name="reshape_and_cache_paged", dtypes=["bfloat16", "int64"], family="serving",
               tags=["serving", "kv-cache", "paged", "scatter", "index-put", "in-place", "slot-mapping", "bf16"],
               mutates=["key_cache", "value_cache"],
               fixed_sizes=["block_size", "head_size", "x"])  # the engine's page and head geometry

num_tokens = 128
num_kv_heads = 4
head_size = 64
block_size = 16
x = 8  # 16 bytes of bf16
num_blocks = 2 * ((num_tokens + block_size - 1) // block_size)


class Model(torch.nn.Module):
    """key/value [num_tokens, num_kv_heads, head_size]; key_cache [num_blocks, num_kv_heads,
    head_size // x, block_size, x]; value_cache [num_blocks, num_kv_heads, head_size, block_size];
    slot_mapping [num_tokens] int64: block slot // block_size, row slot % block_size, -1 skipped."""

    def forward(self, key, value, key_cache, value_cache, slot_mapping):
        block = value_cache.shape[3]
        keep = slot_mapping >= 0
        slots = slot_mapping[keep]
        blocks, offsets = slots // block, slots % block
        key_cache[blocks, :, :, offsets, :] = key.view(key.shape[0], key.shape[1], -1, key_cache.shape[4])[keep]
        value_cache[blocks, :, :, offsets] = value[keep]


def _write(tokens, blocks, padding):
    slot_mapping = torch.randperm(blocks * block_size)[:tokens]
    slot_mapping[torch.randperm(tokens)[:padding]] = -1
    return [torch.randn(tokens, num_kv_heads, head_size).to(torch.bfloat16),
            torch.randn(tokens, num_kv_heads, head_size).to(torch.bfloat16),
            torch.randn(blocks, num_kv_heads, head_size // x, block_size, x).to(torch.bfloat16),  # stale
            torch.randn(blocks, num_kv_heads, head_size, block_size).to(torch.bfloat16),
            slot_mapping]


def get_inputs():
    return _write(num_tokens, num_blocks, num_tokens // 8)


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; a ragged batch with padding at both ends; every slot of a full cache written.
    ragged = _write(29, 3, 3)
    ragged[4][0] = ragged[4][-1] = -1
    return [_write(1, 2, 0), ragged, [*_write(2 * block_size, 2, 0)[:4], torch.randperm(2 * block_size)]]
