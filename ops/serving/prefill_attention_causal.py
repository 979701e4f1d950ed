"""vLLM/flash-attn `flash_attn_varlen_func` prefill: packed variable-length sequences, causal, GQA, softmax scale."""
import torch

OPFORGE = dict(name="prefill_attention_causal", dtypes=["bfloat16", "int32"], family="serving",
               tags=["serving", "attention", "prefill", "varlen", "causal", "gqa", "softmax", "bf16"],
               fixed_sizes=["head_size"])  # the model's head geometry, not a problem size

num_seqs = 4
max_seq_len = 512
num_kv_heads = 2
queries_per_kv = 4  # GQA group: query head h reads KV head h // queries_per_kv
num_heads = num_kv_heads * queries_per_kv
head_size = 128


class Model(torch.nn.Module):
    """q [total_tokens, num_heads, head_size], k/v [total_tokens, num_kv_heads, head_size] packed back to
    back; sequence i is rows cu_seqlens[i]:cu_seqlens[i+1] (int32, [num_seqs + 1]). Each query attends to
    the keys of its own sequence at or before its position; fp32 scores and softmax, output in q's dtype."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, q, k, v, cu_seqlens):
        group = q.shape[1] // k.shape[1]
        qs = q.float().transpose(0, 1)  # [heads, tokens, d]
        ks = k.float().transpose(0, 1).repeat_interleave(group, dim=0)
        vs = v.float().transpose(0, 1).repeat_interleave(group, dim=0)
        scores = (qs @ ks.transpose(1, 2)) * self.scale  # every token against every token
        token = torch.arange(q.shape[0], device=q.device)
        seq = torch.searchsorted(cu_seqlens, token.to(cu_seqlens.dtype), right=True)  # 1 + its sequence
        allowed = (seq[:, None] == seq[None, :]) & (token[None, :] <= token[:, None])
        probs = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
        return (probs @ vs).transpose(0, 1).to(q.dtype)

def _packed(seq_lens):
    cu_seqlens = torch.zeros(len(seq_lens) + 1, dtype=torch.int32)
    cu_seqlens[1:] = torch.cumsum(seq_lens, 0)
    total = int(cu_seqlens[-1])
    return [torch.randn(total, num_heads, head_size).to(torch.bfloat16),
            torch.randn(total, num_kv_heads, head_size).to(torch.bfloat16),
            torch.randn(total, num_kv_heads, head_size).to(torch.bfloat16),
            cu_seqlens]


def get_inputs():
    seq_lens = torch.randint(1, max_seq_len + 1, (num_seqs,), dtype=torch.int32)
    seq_lens[0] = max_seq_len  # the longest sequence present, so a kernel's tiling meets it
    return _packed(seq_lens)


def get_init_inputs():
    return [head_size ** -0.5]


def get_input_variants():
    # One sequence of one token; lengths around a 16/64-row tile's edges, a one-token sequence among them.
    return [_packed(torch.tensor([1], dtype=torch.int32)),
            _packed(torch.tensor([17, 1, 64, 65, 3], dtype=torch.int32))]
