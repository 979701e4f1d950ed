"""Mixtral's router as Hugging Face writes it: softmax in fp32 over the bf16 router logits, torch.topk,
the chosen weights renormalised by their sum and cast back to the hidden states' dtype."""
import torch
import torch.nn.functional as F

# torch.topk leaves the order of equal values unspecified (on a CPU, torch.zeros(1, 8).topk(3) gives ids
# [6, 5, 4]): the stress cases that make ties (x1e3 logits saturate the softmax to 0 and 1, a zeroed row
# is all ties) have no one right answer to compare ids with.
OPFORGE = dict(name="moe_topk_mixtral", dtypes=["bfloat16"], family="serving",
               tags=["serving", "moe", "router", "topk", "softmax", "row", "bf16"],
               stress={"scaled": False, "zeros": False})

num_tokens = 512
num_experts = 8  # Mixtral 8x7B: 8 experts, 2 per token
top_k = 2


class Model(torch.nn.Module):
    """router_logits [num_tokens, num_experts] bf16 -> (routing_weights bf16 [num_tokens, top_k],
    selected_experts int64 [num_tokens, top_k]), largest first."""

    def __init__(self, top_k):
        super().__init__()
        self.top_k = top_k

    def forward(self, router_logits):
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights = routing_weights / routing_weights.sum(dim=-1, keepdim=True)
        return routing_weights.to(router_logits.dtype), selected_experts


def _logits(tokens, experts):
    """Each row a permutation of values 1/8 apart (exact in bf16): no ties among the probabilities."""
    ranks = torch.rand(tokens, experts).argsort(dim=-1).float()
    return ((ranks - experts / 2) / 8).to(torch.bfloat16)


def get_inputs():
    return [_logits(num_tokens, num_experts)]


def get_init_inputs():
    return [top_k]


def get_input_variants():
    # One decode token; a ragged batch; a wider router (Qwen2-MoE-like 60 experts) with the same k.
    return [[_logits(1, num_experts)], [_logits(37, num_experts)], [_logits(19, 60)]]
