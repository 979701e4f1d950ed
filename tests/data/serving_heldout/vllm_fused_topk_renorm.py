"""vLLM `fused_topk` (native path): softmax over the router logits, top-k, weights renormalised, int32 ids."""
import torch

OPFORGE = dict(name="vllm_fused_topk_renorm", dtypes=["bfloat16"], family="serving",
               tags=["serving", "moe", "router", "topk", "softmax", "bf16"])

num_tokens = 16
num_experts = 16
topk = 4


class Model(torch.nn.Module):
    def __init__(self, topk, renormalize):
        super().__init__()
        self.topk, self.renormalize = topk, renormalize

    def forward(self, gating_output):
        topk_weights = torch.softmax(gating_output, dim=-1, dtype=torch.float32)
        topk_weights, topk_ids = torch.topk(topk_weights, self.topk, dim=-1)
        if self.renormalize:
            topk_weights = topk_weights / topk_weights.sum(dim=-1, keepdim=True)
        return topk_weights, topk_ids.to(torch.int32)


def get_inputs():
    return [torch.randn(num_tokens, num_experts, dtype=torch.bfloat16)]


def get_init_inputs():
    return [topk, True]


def get_input_variants():
    return [[torch.randn(1, num_experts, dtype=torch.bfloat16)], [torch.randn(37, 8, dtype=torch.bfloat16)]]
