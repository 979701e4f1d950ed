"""vLLM sampler `apply_top_k_top_p`: per-row top-k then top-p (nucleus) masking of logits with -inf."""
import torch

OPFORGE = dict(name="topk_topp_mask", dtypes=["float32", "int32"], family="serving",
               tags=["serving", "sampling", "topk", "topp", "sort", "cumsum", "softmax", "mask", "row"],
               # which elements become -inf compares exactly, so the given logits keep every top-p cut far
               # from a rounding step: scaled x1e-3 flattens them to near-ties, a zeroed row is all ties
               stress={"scaled": False, "zeros": False})

batch_size = 64
vocab_size = 32000  # Llama-2
_HEAD = 16  # tokens per row that carry the probability mass (underscore: not a size constant)


class Model(torch.nn.Module):
    """logits float32 [batch, vocab], top_k int32 [batch] (vocab = off), top_p float32 [batch] (1.0 = off)
    -> logits with -inf outside each row's kept set. Top-k keeps values >= the k-th largest; top-p then,
    over the softmax of what is left, sorted ascending, masks the prefix whose cumulative probability is
    <= 1 - p, always keeping the largest element (vLLM's `apply_top_k_top_p`, the sort-based path)."""

    def forward(self, logits, top_k, top_p):
        logits_sort, logits_idx = logits.sort(dim=-1, descending=False)
        kth = logits_sort.gather(1, (logits_sort.size(1) - top_k.long()).unsqueeze(1))
        logits_sort = logits_sort.masked_fill(logits_sort < kth, float("-inf"))
        cumulative = logits_sort.softmax(dim=-1).cumsum(dim=-1)
        top_p_mask = cumulative <= 1 - top_p.unsqueeze(1)
        top_p_mask[:, -1] = False
        logits_sort = logits_sort.masked_fill(top_p_mask, float("-inf"))
        return logits_sort.scatter(dim=-1, index=logits_idx, src=logits_sort)


def _sampling(batch, vocab):
    """Rows whose mass sits on _HEAD tokens at logits 24, 23, ..., each e times the next, the rest in a
    band around 0 (a tail of total mass < 1e-6 that top-p keeps or drops whole). A top-p row's 1 - p is
    e^-(m + 0.5): halfway, in log terms, between two head tokens' tail masses. Rows cycle through: no
    filter, top-k only, top-p only, both (with k >= m + 3, so top-k does not move the top-p cut)."""
    ranks = torch.rand(batch, vocab).argsort(dim=-1)
    tail = torch.rand(batch, vocab) - 0.5
    logits = torch.where(ranks < _HEAD, 24.0 - ranks.float(), tail)
    m = torch.randint(0, 6, (batch,))
    mode = torch.arange(batch) % 4  # 0 none, 1 top-k, 2 top-p, 3 both
    k = torch.where(mode == 1, torch.randint(1, _HEAD + 1, (batch,)), m + 3 + torch.randint(0, _HEAD - 8, (batch,)))
    top_k = torch.where((mode == 1) | (mode == 3), k.clamp(max=vocab), torch.full((batch,), vocab)).to(torch.int32)
    top_p = torch.where(mode >= 2, 1 - torch.exp(-(m.float() + 0.5)), torch.ones(batch))
    return [logits, top_k, top_p]


def get_inputs():
    return _sampling(batch_size, vocab_size)


def get_init_inputs():
    return []


def get_input_variants():
    # One row with both filters; a ragged batch over a vocabulary no power-of-two block divides.
    one = _sampling(4, 1000)
    return [[one[0][3:], one[1][3:], one[2][3:]], _sampling(7, 50257)]
