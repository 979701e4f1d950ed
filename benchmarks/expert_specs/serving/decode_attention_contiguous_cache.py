"""Decode attention over a contiguous per-sequence KV cache [batch, kv_heads, max_len, head_size] (the
HND layout of FlashInfer's and HF's static caches): one query token per sequence, each sequence's own
length masking the cache's unused tail, GQA by repeat_interleave, fp32 scores and softmax, bf16 out."""
import torch

OPFORGE = dict(name="decode_attention_contiguous_cache", dtypes=["bfloat16", "int32"], family="serving",
               tags=["serving", "attention", "decode", "kv-cache", "gqa", "padding-mask", "softmax", "bf16"],
               fixed_sizes=["head_size"])  # the model's head geometry, not a problem size

num_seqs = 16
max_len = 512
num_kv_heads = 2
num_heads = 8
head_size = 128


class Model(torch.nn.Module):
    """query [num_seqs, num_heads, head_size]; k_cache/v_cache [num_seqs, num_kv_heads, max_len,
    head_size]; seq_lens [num_seqs] int32 (1 <= seq_lens[b] <= max_len): keys at or past it are masked."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, query, k_cache, v_cache, seq_lens):
        group = query.shape[1] // k_cache.shape[1]
        k = k_cache.float().repeat_interleave(group, dim=1)  # [num_seqs, num_heads, max_len, head_size]
        v = v_cache.float().repeat_interleave(group, dim=1)
        scores = (query.float().unsqueeze(2) @ k.transpose(-1, -2)).squeeze(2) * self.scale  # [seqs, heads, len]
        past = torch.arange(k.shape[2], device=query.device)[None, :] >= seq_lens[:, None]
        probs = scores.masked_fill(past[:, None, :], float("-inf")).softmax(dim=-1)
        return (probs.unsqueeze(2) @ v).squeeze(2).to(query.dtype)


def _decode(seq_lens, length):
    seqs = len(seq_lens)
    return [torch.randn(seqs, num_heads, head_size).to(torch.bfloat16),
            torch.randn(seqs, num_kv_heads, length, head_size).to(torch.bfloat16),
            torch.randn(seqs, num_kv_heads, length, head_size).to(torch.bfloat16), seq_lens]


def get_inputs():
    seq_lens = torch.randint(1, max_len + 1, (num_seqs,), dtype=torch.int32)
    seq_lens[0] = max_len  # one sequence fills its cache
    return _decode(seq_lens, max_len)


def get_init_inputs():
    return [head_size ** -0.5]


def get_input_variants():
    # One token of context; lengths around a 64-key block's edge in a cache longer than any of them.
    return [_decode(torch.tensor([1], dtype=torch.int32), 1),
            _decode(torch.tensor([64, 65, 63, 1, 130], dtype=torch.int32), 200)]
