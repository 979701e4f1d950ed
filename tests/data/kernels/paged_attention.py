"""A correct paged decode attention (tests/data/data_specs/paged_attention.py): one program per
(sequence, head) gathers its tokens' K/V rows through the block table and softmaxes in one tile."""
import torch
import triton
import triton.language as tl


@triton.jit
def _paged_attention_kernel(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, out_ptr, max_blocks, heads, dim,
                            block_size, scale, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    n = tl.load(lens_ptr + b)
    tokens = tl.arange(0, BLOCK_N)
    valid = tokens < n
    block = tl.load(table_ptr + b * max_blocks + tokens // block_size, mask=valid, other=0)
    d = tl.arange(0, BLOCK_D)
    dmask = d < dim
    q = tl.load(q_ptr + (b * heads + h) * dim + d, mask=dmask, other=0.0)
    rows = (block * block_size + tokens % block_size) * heads + h
    offs = rows[:, None] * dim + d[None, :]
    mask = valid[:, None] & dmask[None, :]
    k = tl.load(k_ptr + offs, mask=mask, other=0.0)
    s = tl.where(valid, tl.sum(k * q[None, :], axis=1) * scale, float("-inf"))
    p = tl.exp(s - tl.max(s, axis=0))
    p = p / tl.sum(p, axis=0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + (b * heads + h) * dim + d, tl.sum(v * p[:, None], axis=0), mask=dmask)


class ModelNew(torch.nn.Module):
    def forward(self, q, k_cache, v_cache, block_tables, seq_lens):
        # the kernel indexes rows by their sizes: strided inputs must be copied first
        q, k_cache, v_cache = q.contiguous(), k_cache.contiguous(), v_cache.contiguous()
        block_tables, seq_lens = block_tables.contiguous(), seq_lens.contiguous()
        batch, heads, dim = q.shape
        block_size, max_blocks = k_cache.shape[1], block_tables.shape[1]
        out = torch.empty_like(q)
        _paged_attention_kernel[(batch, heads)](
            q, k_cache, v_cache, block_tables, seq_lens, out, max_blocks, heads, dim, block_size, dim ** -0.5,
            BLOCK_N=triton.next_power_of_2(max_blocks * block_size), BLOCK_D=triton.next_power_of_2(dim))
        return out
