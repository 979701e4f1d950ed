"""vLLM `paged_attention` decode: one query token per sequence over a paged KV cache via block tables, GQA.

Written as a Python loop over the data (`seq_lens[b].item()` per sequence): the form ops/serving/paged_decode_attention.py had
before it was vectorised. torch.export cannot trace it into one generic graph, so codegen's generate()
refuses it with an Unsupported reason naming the export failure; the expert drafter then drafts from
its traceable twin, ops/serving/paged_decode_attention.py, which returns the same on every input list
(codegen/twins.py), and the harness verifies that candidate against this loop."""
import torch

OPFORGE = dict(name="paged_decode_attention_loop", dtypes=["bfloat16", "int32"], family="serving",
               tags=["serving", "data-dependent-loop", "attention", "decode", "paged", "kv-cache", "block-table", "gqa", "gather",
                     "softmax", "bf16"],
               # the cache's page size and the head geometry are the engine's, not problem sizes
               fixed_sizes=["block_size", "head_size"])

num_seqs = 32
max_seq_len = 1024
block_size = 16
num_kv_heads = 2
queries_per_kv = 4  # GQA group: query head h reads KV head h // queries_per_kv
num_heads = num_kv_heads * queries_per_kv
head_size = 128
max_blocks_per_seq = (max_seq_len + block_size - 1) // block_size
num_blocks = num_seqs * max_blocks_per_seq


class Model(torch.nn.Module):
    """query [num_seqs, num_heads, head_size]; key_cache/value_cache [num_blocks, block_size, num_kv_heads,
    head_size] (vLLM's flash layout); block_tables [num_seqs, max_blocks_per_seq] int32; seq_lens [num_seqs]
    int32. Sequence b's token t lives in block block_tables[b, t // block_size] at row t % block_size; the
    gathered blocks' rows at or past seq_lens[b] are masked. fp32 scores and softmax, output in q's dtype."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, query, key_cache, value_cache, block_tables, seq_lens):
        block = key_cache.shape[1]
        group = query.shape[1] // key_cache.shape[2]
        out = torch.empty_like(query)
        for b in range(query.shape[0]):
            n = int(seq_lens[b].item())
            blocks = block_tables[b, : (n + block - 1) // block].long()
            k = key_cache[blocks].flatten(0, 1).float().repeat_interleave(group, dim=1)  # [rows, heads, d]
            v = value_cache[blocks].flatten(0, 1).float().repeat_interleave(group, dim=1)
            scores = torch.einsum("hd,nhd->hn", query[b].float(), k) * self.scale
            valid = torch.arange(k.shape[0], device=query.device) < n
            probs = scores.masked_fill(~valid, float("-inf")).softmax(dim=-1)
            out[b] = torch.einsum("hn,nhd->hd", probs, v).to(query.dtype)
        return out


def _paged(seq_lens, table_width):
    seqs = len(seq_lens)
    blocks = seqs * table_width
    block_tables = torch.randperm(blocks).to(torch.int32).reshape(seqs, table_width)  # scattered pages
    return [torch.randn(seqs, num_heads, head_size).to(torch.bfloat16),
            torch.randn(blocks, block_size, num_kv_heads, head_size).to(torch.bfloat16),
            torch.randn(blocks, block_size, num_kv_heads, head_size).to(torch.bfloat16),
            block_tables, seq_lens]


def get_inputs():
    seq_lens = torch.randint(1, max_seq_len + 1, (num_seqs,), dtype=torch.int32)
    seq_lens[0] = max_seq_len  # one sequence fills its whole block table row
    return _paged(seq_lens, max_blocks_per_seq)


def get_init_inputs():
    return [head_size ** -0.5]


def get_input_variants():
    # One sequence of one token; lengths on and either side of a block boundary, in a table wider than
    # needed; a long context over many pages (the CPU-shrunk main problem has few).
    return [_paged(torch.tensor([1], dtype=torch.int32), 1),
            _paged(torch.tensor([block_size, block_size + 1, block_size - 1, 1, 3 * block_size], dtype=torch.int32), 4),
            _paged(torch.tensor([16 * block_size + 1, 5], dtype=torch.int32), 17)]
