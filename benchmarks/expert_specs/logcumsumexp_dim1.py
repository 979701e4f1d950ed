"""log(cumsum(exp(x))) along dim 1, stably: values far apart in scale, and far above and below 0."""
import torch

OPFORGE = dict(name="logcumsumexp_dim1", dtypes=["float32"], tags=["scan", "logcumsumexp", "row", "log"], family="scan")

batch_size = 4096
length = 8192
scan_dim = 1


class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.logcumsumexp(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, length) * 4]


def get_init_inputs():
    return [scan_dim]


def get_input_variants():
    # a naive exp overflows (x * 200) or underflows the early columns under a later large one (x - 300)
    return [[torch.randn(7, 3001) * 200], [torch.randn(129, 3) - 300.0], [torch.randn(3, 257, 11)]]
