"""SGLang `MHATokenToKVPool.set_kv_buffer`: token-indexed K/V buffers written at `loc`; returns the K buffer."""
import torch

OPFORGE = dict(name="sglang_set_kv_buffer", dtypes=["float16", "int64"], family="serving",
               tags=["serving", "kv-cache", "scatter", "in-place", "fp16"],
               mutates=["k_buffer", "v_buffer"], fixed_sizes=["head_num", "head_dim"])

size = 64  # tokens the pool holds
num_new = 16
head_num = 2
head_dim = 16


class Model(torch.nn.Module):
    def forward(self, k_buffer, v_buffer, loc, cache_k, cache_v):
        k_buffer[loc] = cache_k
        v_buffer[loc] = cache_v
        return k_buffer


def _inputs(pool, new):
    return [torch.randn(pool, head_num, head_dim, dtype=torch.float16),
            torch.randn(pool, head_num, head_dim, dtype=torch.float16),
            torch.randperm(pool)[:new],
            torch.randn(new, head_num, head_dim, dtype=torch.float16),
            torch.randn(new, head_num, head_dim, dtype=torch.float16)]


def get_inputs():
    return _inputs(size, num_new)


def get_init_inputs():
    return []


def get_input_variants():
    return [_inputs(9, 1), _inputs(33, 33)]
