"""SGLang `fused_topk_native`: fp32 softmax of the gate, top-k, renormalised weights, int64 expert ids."""
import torch
import torch.nn.functional as F

OPFORGE = dict(name="sglang_fused_topk_native", dtypes=["float32"], family="serving",
               tags=["serving", "moe", "router", "topk", "softmax", "fp32"])

M = 48
E = 8
topk = 2


class Model(torch.nn.Module):
    def forward(self, hidden_states, gating_output):
        assert hidden_states.shape[0] == gating_output.shape[0], "Number of tokens mismatch"
        topk_weights = F.softmax(gating_output.float(), dim=-1)
        topk_weights, topk_ids = torch.topk(topk_weights, topk, dim=-1)
        topk_weights = topk_weights / topk_weights.sum(dim=-1, keepdim=True)
        return topk_weights, topk_ids


def get_inputs():
    return [torch.randn(M, 32), torch.randn(M, E)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(1, 32), torch.randn(1, E)], [torch.randn(23, 32), torch.randn(23, E)]]
