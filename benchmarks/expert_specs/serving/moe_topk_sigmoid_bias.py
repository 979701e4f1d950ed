"""DeepSeek-V3-style scoring without groups: sigmoid scores, experts chosen by score + a per-expert
correction bias, the weights gathered from the unbiased scores, renormalised and scaled."""
import torch

# torch.topk leaves the order of equal values unspecified (on a CPU, torch.zeros(1, 8).topk(3) gives ids
# [6, 5, 4]): the stress cases that make ties (x1e3 logits saturate the sigmoid to 0 and 1, a zeroed row
# is all ties) have no one right answer to compare ids with.
OPFORGE = dict(name="moe_topk_sigmoid_bias", dtypes=["float32"], family="serving",
               tags=["serving", "moe", "router", "topk", "sigmoid", "gather", "row"],
               stress={"scaled": False, "zeros": False})

num_tokens = 256
num_experts = 64
top_k = 6


class Model(torch.nn.Module):
    """logits [num_tokens, num_experts] fp32 -> (topk_weights fp32 [num_tokens, top_k], topk_ids int32)."""

    def __init__(self, num_experts, top_k, routed_scaling_factor=2.5):
        super().__init__()
        self.top_k, self.scale = top_k, routed_scaling_factor
        self.register_buffer("e_score_correction_bias", torch.linspace(-0.5, 0.5, num_experts))

    def forward(self, logits):
        scores = logits.sigmoid()
        choice = scores + self.e_score_correction_bias
        ids = torch.topk(choice, k=self.top_k, dim=-1, sorted=True).indices
        weights = scores.gather(1, ids)
        weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-20)
        return weights * self.scale, ids.to(torch.int32)


def _logits(tokens, experts):
    """Distinct logits per row, spaced so the biased scores never tie."""
    ranks = torch.rand(tokens, experts).argsort(dim=-1).float()
    return (ranks - experts / 2) / 4


def get_inputs():
    return [_logits(num_tokens, num_experts)]


def get_init_inputs():
    return [num_experts, top_k]


def get_input_variants():
    return [[_logits(1, num_experts)], [_logits(29, num_experts)]]
