"""vLLM/flash-attn `flash_attn_varlen_func` prefill: packed variable-length sequences, causal, GQA, softmax scale.

Written as a Python loop over the data (`cu_seqlens.tolist()`, then one slice per sequence): the form ops/serving/prefill_attention_causal.py had
before it was vectorised. torch.export cannot trace it into one generic graph, so codegen's generate()
refuses it with an Unsupported reason naming the export failure; the expert drafter then drafts from
its traceable twin, ops/serving/prefill_attention_causal.py, which returns the same on every input list
(codegen/twins.py), and the harness verifies that candidate against this loop."""
import torch

OPFORGE = dict(name="prefill_attention_causal_loop", dtypes=["bfloat16", "int32"], family="serving",
               tags=["serving", "data-dependent-loop", "attention", "prefill", "varlen", "causal", "gqa", "softmax", "bf16"],
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
        out = torch.empty_like(q)
        group = q.shape[1] // k.shape[1]
        bounds = cu_seqlens.tolist()
        for start, end in zip(bounds[:-1], bounds[1:]):
            qs = q[start:end].float().transpose(0, 1)  # [heads, n, d]
            ks = k[start:end].float().transpose(0, 1).repeat_interleave(group, dim=0)
            vs = v[start:end].float().transpose(0, 1).repeat_interleave(group, dim=0)
            scores = (qs @ ks.transpose(1, 2)) * self.scale
            n = end - start
            causal = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
            probs = scores.masked_fill(causal, float("-inf")).softmax(dim=-1)
            out[start:end] = (probs @ vs).transpose(0, 1).to(q.dtype)
        return out


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
