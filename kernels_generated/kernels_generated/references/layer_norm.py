"""LayerNorm over the last dim with learnable weight and bias (torch.nn.LayerNorm, eps=1e-5)."""
import torch

OPFORGE = dict(name="layer_norm", dtypes=["float32"], tags=["norm", "layernorm", "row", "affine"], family="norm")

batch_size = 4096
hidden = 4096


class Model(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]


def get_input_variants():
    # The last dim is fixed by the weight, so the variants change the rows: one row, a ragged count, 3-D.
    return [[torch.randn(1, hidden)], [torch.randn(33, hidden)], [torch.randn(3, 5, hidden) * 4 + 2]]
