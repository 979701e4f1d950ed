"""A contiguous KV cache (HF/gpt-fast style static cache): the step's new keys and values copied in
place into each sequence's [max_len] rows at their positions, `index_copy_` along the sequence dim."""
import torch

OPFORGE = dict(name="kv_cache_index_copy", dtypes=["bfloat16", "int64"], family="serving",
               tags=["serving", "kv-cache", "scatter", "index-copy", "in-place", "bf16"],
               mutates=["k_cache", "v_cache"],
               fixed_sizes=["num_heads", "head_dim"])  # the model's head geometry

batch = 4
max_len = 128
num_heads = 8
head_dim = 64
new_tokens = 16


class Model(torch.nn.Module):
    """k_cache/v_cache [batch, max_len, num_heads, head_dim]; k_new/v_new [batch, new_tokens,
    num_heads, head_dim]; positions [new_tokens] int64, distinct, where the new tokens go in every
    sequence. Returns nothing: the caches are the result."""

    def forward(self, k_cache, v_cache, k_new, v_new, positions):
        k_cache.index_copy_(1, positions, k_new)
        v_cache.index_copy_(1, positions, v_new)


def _step(b, length, tokens, start):
    positions = torch.arange(start, start + tokens) if start is not None else torch.randperm(length)[:tokens]
    return [torch.randn(b, length, num_heads, head_dim).to(torch.bfloat16),  # stale contents
            torch.randn(b, length, num_heads, head_dim).to(torch.bfloat16),
            torch.randn(b, tokens, num_heads, head_dim).to(torch.bfloat16),
            torch.randn(b, tokens, num_heads, head_dim).to(torch.bfloat16),
            positions]


def get_inputs():
    return _step(batch, max_len, new_tokens, max_len // 2)  # a chunk of prefill after half the cache


def get_init_inputs():
    return []


def get_input_variants():
    # A decode step at the last row; scattered positions; the whole cache rewritten, one sequence.
    return [_step(3, 33, 1, 32), _step(2, 40, 7, None), _step(1, 24, 24, 0)]
