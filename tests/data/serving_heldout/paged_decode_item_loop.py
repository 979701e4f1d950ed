"""vLLM's reference `paged_attention` decode as its kernel tests write it: a loop over sequences reading lengths with .item()."""
import torch

OPFORGE = dict(name="paged_decode_item_loop", dtypes=["float32", "int32"], family="serving",
               tags=["serving", "attention", "decode", "paged", "kv-cache", "block-table", "gqa", "fp32"],
               fixed_sizes=["block_size", "head_size"])

num_seqs = 3
max_seq_len = 40
block_size = 8
num_kv_heads = 2
num_query_heads = 4
head_size = 16
max_num_blocks_per_seq = (max_seq_len + block_size - 1) // block_size
num_blocks = num_seqs * max_num_blocks_per_seq


class Model(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, query, key_cache, value_cache, block_tables, seq_lens):
        output = torch.empty_like(query)
        num_queries_per_kv = query.shape[1] // key_cache.shape[2]
        block_size = key_cache.shape[1]
        for i in range(query.shape[0]):
            q = query[i].unsqueeze(0)
            seq_len = int(seq_lens[i].item())
            block_table = block_tables[i]
            keys, values = [], []
            for j in range(seq_len):
                block_number = int(block_table[j // block_size].item())
                block_offset = j % block_size
                keys.append(key_cache[block_number, block_offset])
                values.append(value_cache[block_number, block_offset])
            keys = torch.stack(keys, dim=0).repeat_interleave(num_queries_per_kv, dim=1)
            values = torch.stack(values, dim=0).repeat_interleave(num_queries_per_kv, dim=1)
            attn = torch.einsum("qhd,khd->hqk", q, keys).float() * self.scale
            attn = torch.softmax(attn, dim=-1).to(values.dtype)
            out = torch.einsum("hqk,khd->qhd", attn, values)
            output[i].copy_(out.view(query.shape[1], query.shape[2]))
        return output


def _paged(seq_lens, width):
    seqs = len(seq_lens)
    return [torch.randn(seqs, num_query_heads, head_size),
            torch.randn(seqs * width, block_size, num_kv_heads, head_size),
            torch.randn(seqs * width, block_size, num_kv_heads, head_size),
            torch.randperm(seqs * width).to(torch.int32).reshape(seqs, width),
            torch.tensor(seq_lens, dtype=torch.int32)]


def get_inputs():
    return _paged([max_seq_len, 9, 17][:num_seqs] + [5] * max(0, num_seqs - 3), max_num_blocks_per_seq)


def get_init_inputs():
    return [head_size ** -0.5]


def get_input_variants():
    return [_paged([1], 1), _paged([block_size, block_size + 1, 3], 3)]
