"""A plain top-k over the last dim of a 3-D fp32 tensor, smallest first (largest=False): e.g. the k
nearest codebook entries by distance, per batch and position."""
import torch

# torch.topk leaves the order of equal values unspecified (on a CPU, torch.zeros(1, 8).topk(3) gives ids
# [6, 5, 4]): the stress cases that make ties (a zeroed slice is all ties) have no one right answer to
# compare ids with.
OPFORGE = dict(name="topk_logits_smallest", dtypes=["float32"], family="serving",
               tags=["serving", "topk", "ascending", "row"], stress={"zeros": False})

batch = 4
seq = 64
entries = 200
k = 5


class Model(torch.nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, distances):
        values, indices = torch.topk(distances, self.k, dim=-1, largest=False)
        return values, indices


def _distances(*shape):
    """Distinct values per row (a shuffled ramp), some negative."""
    ranks = torch.rand(*shape).argsort(dim=-1).float()
    return ranks * 0.25 - 3.0


def get_inputs():
    return [_distances(batch, seq, entries)]


def get_init_inputs():
    return [k]


def get_input_variants():
    # A single row; k equal to the row's length; a row length that is not a power of two.
    return [[_distances(1, 1, entries)], [_distances(2, 3, k)], [_distances(3, 7, 33)]]
