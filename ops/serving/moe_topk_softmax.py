"""vLLM `topk_softmax` (fused_topk): router logits -> softmax -> top-k weights (renormalised) and expert ids."""
import torch

OPFORGE = dict(name="moe_topk_softmax", dtypes=["bfloat16"], family="serving",
               tags=["serving", "moe", "router", "topk", "softmax", "row", "int32-output", "bf16"])

num_tokens = 1024
num_experts = 128  # Qwen3-MoE: 128 experts, 8 per token, renormalised
topk = 8


class Model(torch.nn.Module):
    """gating_output [num_tokens, num_experts] -> (topk_weights float32 [num_tokens, topk], topk_ids int32
    [num_tokens, topk]), largest first, equal probabilities in expert order (the lower id first, as vLLM's
    kernel breaks ties); softmax in fp32, then top-k, then (renormalize) weights / their sum."""

    def __init__(self, topk, renormalize=True):
        super().__init__()
        self.topk, self.renormalize = topk, renormalize

    def forward(self, gating_output):
        probs = torch.softmax(gating_output.float(), dim=-1)
        order = torch.sort(probs, dim=-1, descending=True, stable=True)  # stable: ties by expert id
        weights, ids = order.values[:, : self.topk], order.indices[:, : self.topk]
        if self.renormalize:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        return weights, ids.to(torch.int32)


def _logits(tokens, experts):
    """Each row a random permutation of evenly spaced values (1/16 apart, exact in bf16): no ties, and
    neighbouring probabilities differ by 6% so no rounding reorders them."""
    ranks = torch.rand(tokens, experts).argsort(dim=-1).float()
    return ((ranks - experts / 2) / 16).to(torch.bfloat16)


def get_inputs():
    return [_logits(num_tokens, num_experts)]


def get_init_inputs():
    return [topk, True]


def get_input_variants():
    # One decode token; a ragged batch over fewer experts (Mixtral-like 8 -> top-8 = all of them).
    return [[_logits(1, num_experts)], [_logits(37, num_experts)], [_logits(5, topk)]]
