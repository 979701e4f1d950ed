"""Decode attention over a contiguous per-sequence cache in Hugging Face's static-cache layout [batch,
kv_heads, max_len, head_dim], the scale given to the constructor: keys at or past seq_lens[b] masked,
GQA by repeat_interleave, fp32 scores and softmax, output in the query's dtype."""
import torch


class Model(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, query, k_cache, v_cache, seq_lens):
        group = query.shape[1] // k_cache.shape[1]
        k = k_cache.float().repeat_interleave(group, dim=1)  # [batch, heads, max_len, head_dim]
        v = v_cache.float().repeat_interleave(group, dim=1)
        scores = torch.einsum("bhd,bhld->bhl", query.float(), k) * self.scale
        past = torch.arange(k.shape[2], device=query.device) >= seq_lens[:, None]
        probs = scores.masked_fill(past[:, None, :], float("-inf")).softmax(dim=-1)
        return torch.einsum("bhl,bhld->bhd", probs, v).to(query.dtype)
