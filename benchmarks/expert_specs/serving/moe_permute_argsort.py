"""MoE dispatch as a Python engine writes it: argsort (stable) of the flat expert ids, per-expert
counts with bincount, and the offsets as the padded cumsum (int64 throughout)."""
import torch
import torch.nn.functional as F

OPFORGE = dict(name="moe_permute_argsort", dtypes=["int64"], family="serving",
               tags=["serving", "moe", "permute", "sort", "counting-sort", "histogram", "scan"],
               fixed_sizes=["num_experts"])

num_tokens = 2048
num_experts = 128
topk = 8


class Model(torch.nn.Module):
    """expert_ids [num_tokens, topk] int64 -> (order int64 [num_tokens * topk]: slot indices by expert,
    ties in slot order; counts int32 [num_experts]; offsets int64 [num_experts + 1])."""

    def __init__(self, num_experts):
        super().__init__()
        self.num_experts = num_experts

    def forward(self, expert_ids):
        flat = expert_ids.flatten()
        order = torch.argsort(flat, stable=True)
        counts = torch.bincount(flat, minlength=self.num_experts)
        offsets = F.pad(torch.cumsum(counts, dim=0), (1, 0))
        return order, counts.to(torch.int32), offsets


def _routing(tokens, k, experts=num_experts):
    """k distinct experts per token, skewed so some experts are hot and some never chosen."""
    skew = torch.rand(tokens, experts) * torch.linspace(0.1, 1.0, experts) ** 2
    return skew.topk(k, dim=-1).indices


def get_inputs():
    return [_routing(num_tokens, topk)]


def get_init_inputs():
    return [num_experts]


def get_input_variants():
    # One token; top-1 routing; a batch that only reaches the first 4 experts.
    return [[_routing(1, topk)], [_routing(333, 1)], [_routing(100, 2, 4)]]
