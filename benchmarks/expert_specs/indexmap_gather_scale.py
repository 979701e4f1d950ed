"""torch.gather along the feature dim (the index tensor loaded in-kernel), then a scale."""
import torch
import torch.nn as nn

OPFORGE = dict(name="indexmap_gather_scale", dtypes=["float32"], tags=["indexmap", "gather", "int64-input"], family="indexmap")

batch_size = 256
features = 4096
picks = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        return torch.gather(x, 1, index) * 3.0


def get_inputs():
    return [torch.randn(batch_size, features), torch.randint(0, features, (batch_size, picks))]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 17), torch.randint(0, 17, (3, 40))], [torch.randn(5, 2), torch.randint(0, 2, (2, 1))]]
