"""vLLM `reshape_and_cache_flash`: write each token's key/value into the paged KV cache at its slot, in place."""
import torch

OPFORGE = dict(name="reshape_and_cache", dtypes=["bfloat16", "int64"], family="serving",
               tags=["serving", "kv-cache", "paged", "scatter", "index-put", "in-place", "slot-mapping", "bf16"],
               mutates=["key_cache", "value_cache"],
               fixed_sizes=["block_size", "head_size"])  # the engine's page size and head geometry

num_tokens = 256
block_size = 16
num_kv_heads = 8
head_size = 128
num_blocks = 2 * ((num_tokens + block_size - 1) // block_size)  # room for every token, half the cache unused


class Model(torch.nn.Module):
    """key/value [num_tokens, num_kv_heads, head_size]; key_cache/value_cache [num_blocks, block_size,
    num_kv_heads, head_size]; slot_mapping [num_tokens] int64: token i goes to block slot // block_size,
    row slot % block_size; slot -1 is a padding token that is skipped. Slots are distinct, so the
    writes do not race. Returns nothing: the caches are the result."""

    def forward(self, key, value, key_cache, value_cache, slot_mapping):
        block = key_cache.shape[1]
        keep = slot_mapping >= 0
        slots = slot_mapping[keep]
        key_cache[slots // block, slots % block] = key[keep]
        value_cache[slots // block, slots % block] = value[keep]


def _write(tokens, blocks, padding):
    slot_mapping = torch.randperm(blocks * block_size)[:tokens]
    slot_mapping[torch.randperm(tokens)[:padding]] = -1
    return [torch.randn(tokens, num_kv_heads, head_size).to(torch.bfloat16),
            torch.randn(tokens, num_kv_heads, head_size).to(torch.bfloat16),
            torch.randn(blocks, block_size, num_kv_heads, head_size).to(torch.bfloat16),  # stale contents
            torch.randn(blocks, block_size, num_kv_heads, head_size).to(torch.bfloat16),
            slot_mapping]


def get_inputs():
    return _write(num_tokens, num_blocks, num_tokens // 8)


def get_init_inputs():
    return []


def get_input_variants():
    # One decode token; a ragged prefill with padding at both ends; every slot of a full cache written.
    ragged = _write(37, 4, 0)
    ragged[4][0] = ragged[4][-1] = -1
    return [_write(1, 3, 0), ragged, [*_write(2 * block_size, 2, 0)[:4], torch.randperm(2 * block_size)]]
