"""Decode attention over a contiguous per-sequence cache in Meta's Llama / gpt-fast layout [batch, max_len,
kv_heads, head_dim]: one query token per sequence, keys at or past lengths[b] masked, GQA by
repeat_interleave, scale 1/sqrt(head_dim), fp32 scores and softmax, output in the query's dtype."""
import torch


class Model(torch.nn.Module):
    def forward(self, query, cache_k, cache_v, lengths):
        group = query.shape[1] // cache_k.shape[2]
        k = cache_k.float().repeat_interleave(group, dim=2)  # [batch, max_len, heads, head_dim]
        v = cache_v.float().repeat_interleave(group, dim=2)
        scores = torch.einsum("bhd,blhd->bhl", query.float(), k) * query.shape[-1] ** -0.5
        past = torch.arange(k.shape[1], device=query.device) >= lengths[:, None]
        probs = scores.masked_fill(past[:, None, :], float("-inf")).softmax(dim=-1)
        return torch.einsum("bhl,blhd->bhd", probs, v).to(query.dtype)
