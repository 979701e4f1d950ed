"""Log-softmax over a dim passed to the constructor, of a [batch, dim] tensor."""
import torch

OPFORGE = dict(name="log_softmax_dim1", dtypes=["float32"], tags=["norm", "softmax", "log", "row"], family="norm")

batch_size = 4096
dim = 16384
softmax_dim = 1


class Model(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.log_softmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [softmax_dim]


def get_input_variants():
    return [[torch.randn(11, 4001) * 20], [torch.randn(1, 3)], [torch.randn(129, 1031)]]
