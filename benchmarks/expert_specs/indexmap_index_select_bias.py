"""Rows picked with index_select (an embedding lookup), plus a learned bias per feature."""
import torch
import torch.nn as nn

OPFORGE = dict(name="indexmap_index_select_bias", dtypes=["float32"], tags=["indexmap", "index_select", "bias"], family="indexmap")

vocab = 8192
features = 512
tokens = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, table, ids):
        return torch.index_select(table, 0, ids) + self.bias


def get_inputs():
    return [torch.randn(vocab, features), torch.randint(0, vocab, (tokens,))]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(7, features), torch.randint(0, 7, (33,))], [torch.randn(1, features), torch.zeros(1, dtype=torch.long)]]
