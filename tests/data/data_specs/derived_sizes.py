"""KernelBench level-2 style: module-level values derived from the size constants (a tuple of
one, arithmetic, an input shape), so shrinking must run the spec again for them to follow."""
import torch

OPFORGE = dict(name="derived_sizes", tags=["matmul"])

batch_size = 2048
in_features = 1024
out_features = 1024
hidden = 2 * out_features
scale_shape = (out_features,)
x_shape = (batch_size, in_features)


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features, hidden, scale_shape):
        super().__init__()
        self.up = torch.nn.Linear(in_features, hidden)
        self.down = torch.nn.Linear(hidden, out_features)
        self.scale = torch.nn.Parameter(torch.randn(scale_shape))

    def forward(self, x):
        return self.down(torch.relu(self.up(x))) * self.scale


def get_inputs():
    return [torch.randn(*x_shape)]


def get_init_inputs():
    return [in_features, out_features, hidden, scale_shape]
