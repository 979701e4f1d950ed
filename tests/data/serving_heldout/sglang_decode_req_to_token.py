"""SGLang's torch-native decode attention: per request, token slots from req_to_token up to seq_lens[i].item()."""
import torch

OPFORGE = dict(name="sglang_decode_req_to_token", dtypes=["bfloat16", "int64", "int32"], family="serving",
               tags=["serving", "attention", "decode", "kv-cache", "gather", "gqa", "bf16"],
               fixed_sizes=["head_dim"])

batch = 3
pool_tokens = 96
max_context = 32
num_heads = 4
num_kv_heads = 2
head_dim = 16


class Model(torch.nn.Module):
    def __init__(self, scaling):
        super().__init__()
        self.scaling = scaling

    def forward(self, q, k_buffer, v_buffer, req_to_token, req_pool_indices, seq_lens):
        o = torch.empty_like(q)
        for seq_idx in range(q.shape[0]):
            seq_len_kv = seq_lens[seq_idx].item()
            req_pool_idx = req_pool_indices[seq_idx]
            per_req_tokens = req_to_token[req_pool_idx, :seq_len_kv]
            per_req_key = k_buffer[per_req_tokens].movedim(0, -2)   # [kv_heads, L, d]
            per_req_value = v_buffer[per_req_tokens].movedim(0, -2)
            per_req_query = q[seq_idx].unsqueeze(1)                   # [heads, 1, d]
            out = torch.nn.functional.scaled_dot_product_attention(
                per_req_query.unsqueeze(0), per_req_key.unsqueeze(0), per_req_value.unsqueeze(0),
                scale=self.scaling, enable_gqa=True)
            o[seq_idx] = out.squeeze(0).squeeze(1)
        return o


def _inputs(lens, pool, rows):
    b = len(lens)
    req_to_token = torch.stack([torch.randperm(pool)[:max_context] for _ in range(rows)])
    return [torch.randn(b, num_heads, head_dim, dtype=torch.bfloat16),
            torch.randn(pool, num_kv_heads, head_dim, dtype=torch.bfloat16),
            torch.randn(pool, num_kv_heads, head_dim, dtype=torch.bfloat16),
            req_to_token.to(torch.int32), torch.randperm(rows)[:b], torch.tensor(lens, dtype=torch.int64)]


def get_inputs():
    return _inputs([max_context, 7, 20][:batch] + [3] * max(0, batch - 3), pool_tokens, batch + 2)


def get_init_inputs():
    return [head_dim ** -0.5]


def get_input_variants():
    return [_inputs([1], max_context, 1), _inputs([5, max_context], max_context + 3, 4)]
