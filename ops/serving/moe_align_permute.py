"""vLLM `moe_align_block_size` core: sort the token*topk slots by expert id (stable) with per-expert counts/offsets."""
import torch

OPFORGE = dict(name="moe_align_permute", dtypes=["int32"], family="serving",
               tags=["serving", "moe", "permute", "sort", "counting-sort", "histogram", "scan", "int32-output"],
               fixed_sizes=["num_experts"])  # the model's expert count (an init argument)

num_tokens = 4096
num_experts = 64  # DeepSeek-V2-Lite / OLMoE: 64 experts, 6 / 8 per token
topk = 6


class Model(torch.nn.Module):
    """topk_ids [num_tokens, topk] int32 (distinct experts per token) -> (sorted_ids int32 [num_tokens*topk]:
    the flat slot indices token*topk + j ordered by expert id, ties in slot order (a stable counting sort);
    expert_counts int32 [num_experts]; expert_offsets int32 [num_experts + 1], the exclusive scan of the counts:
    expert e's slots are sorted_ids[offsets[e]:offsets[e+1]])."""

    def __init__(self, num_experts):
        super().__init__()
        self.num_experts = num_experts

    def forward(self, topk_ids):
        flat = topk_ids.reshape(-1).long()
        sorted_ids = torch.sort(flat, stable=True).indices
        counts = torch.bincount(flat, minlength=self.num_experts)
        offsets = torch.zeros(self.num_experts + 1, dtype=torch.int64, device=topk_ids.device)
        offsets[1:] = torch.cumsum(counts, 0)
        return sorted_ids.to(torch.int32), counts.to(torch.int32), offsets.to(torch.int32)


def _routing(tokens, k, experts=None):
    """Each token's k distinct experts, drawn unevenly (some experts hot, some never chosen)."""
    experts = experts or num_experts
    skew = torch.rand(tokens, experts) * torch.linspace(0.2, 1.0, experts) ** 3
    return skew.topk(k, dim=-1).indices.to(torch.int32)


def get_inputs():
    return [_routing(num_tokens, topk)]


def get_init_inputs():
    return [num_experts]


def get_input_variants():
    # One decode token; a ragged batch with top-1; a batch that reaches only the first 8 experts.
    return [[_routing(1, topk)], [_routing(37, 1)], [_routing(50, 2, 8)]]
