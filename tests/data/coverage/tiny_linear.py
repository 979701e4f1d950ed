"""A bias-free Linear whose reduction dim the constructor declares (in_features = 2048); a CPU run
with a small element budget shrinks it."""
import torch

OPFORGE = dict(name="tiny_linear", tags=["matmul"])

batch_size = 16
in_features = 2048
out_features = 16


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features, bias=False)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
