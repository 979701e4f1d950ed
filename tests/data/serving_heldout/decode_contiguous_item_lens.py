"""A decode step over a contiguous per-sequence KV cache, each sequence's length read with .item()."""
import torch

OPFORGE = dict(name="decode_contiguous_item_lens", dtypes=["float16", "int32"], family="serving",
               tags=["serving", "attention", "decode", "kv-cache", "fp16"], fixed_sizes=["head_dim"])

bsz = 4
max_len = 48
n_heads = 2
head_dim = 32


class Model(torch.nn.Module):
    def forward(self, xq, cache_k, cache_v, lengths):
        outs = []
        for b in range(xq.shape[0]):
            L = int(lengths[b].item())
            keys = cache_k[b, :L].float()          # [L, heads, d]
            values = cache_v[b, :L].float()
            scores = torch.einsum("hd,lhd->hl", xq[b].float(), keys) / head_dim ** 0.5
            probs = scores.softmax(dim=-1)
            outs.append(torch.einsum("hl,lhd->hd", probs, values))
        return torch.stack(outs).to(xq.dtype)


def _inputs(lens, length):
    b = len(lens)
    return [torch.randn(b, n_heads, head_dim, dtype=torch.float16),
            torch.randn(b, length, n_heads, head_dim, dtype=torch.float16),
            torch.randn(b, length, n_heads, head_dim, dtype=torch.float16),
            torch.tensor(lens, dtype=torch.int32)]


def get_inputs():
    return _inputs([max_len, 1, 30, 17][:bsz] + [2] * max(0, bsz - 4), max_len)


def get_init_inputs():
    return []


def get_input_variants():
    return [_inputs([1], 1), _inputs([3, 11], 16)]
