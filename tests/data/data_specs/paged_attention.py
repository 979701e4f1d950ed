"""Decode attention over a paged KV cache, its block table built from random sequence lengths:
`int(seq_lens.max())` and `torch.randperm` need values, so meta tensors cannot size it."""
import torch

OPFORGE = dict(name="paged_attention", tags=["attention"])

batch_size = 8  # under 16: never shrunk, so a CPU run launches few programs
num_heads = 2
head_dim = 64
block_size = 16
max_seq_len = 512


class Model(torch.nn.Module):
    """One query token per sequence; sizes come from the tensors, so any consistent set works."""

    def forward(self, q, k_cache, v_cache, block_tables, seq_lens):
        block = k_cache.shape[1]
        out = torch.empty_like(q)
        for b in range(q.shape[0]):
            n = int(seq_lens[b])
            blocks = block_tables[b, : (n + block - 1) // block]
            k = k_cache[blocks].flatten(0, 1)[:n]
            v = v_cache[blocks].flatten(0, 1)[:n]
            scores = torch.einsum("hd,nhd->hn", q[b], k) * q.shape[-1] ** -0.5
            out[b] = torch.einsum("hn,nhd->hd", scores.softmax(-1), v)
        return out


def get_inputs():
    seq_lens = torch.randint(1, max_seq_len + 1, (batch_size,))
    max_blocks = (int(seq_lens.max()) + block_size - 1) // block_size
    num_blocks = batch_size * max_blocks
    block_tables = torch.randperm(num_blocks).reshape(batch_size, max_blocks)
    q = torch.randn(batch_size, num_heads, head_dim)
    k_cache = torch.randn(num_blocks, block_size, num_heads, head_dim)
    v_cache = torch.randn(num_blocks, block_size, num_heads, head_dim)
    return [q, k_cache, v_cache, block_tables, seq_lens]


def get_init_inputs():
    return []
