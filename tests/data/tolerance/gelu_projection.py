"""Exact (erf) GELU of a projection of unit-scale randn inputs: the pre-activations spread to
about +-100 (RMS 32), so the outputs' RMS (about 22) is large against the small values near
x = -2.7, where a tanh-approximated GELU is 4.7e-4 off: under an atol of 1e-4 x that RMS.
in_features is fixed (the larger cases grow the rest): a narrower projection would lower the RMS
and let the old bound catch the tanh there, hiding whether the trials' own bound does."""
import torch

OPFORGE = dict(name="gelu_projection", tags=["matmul", "gelu"], fixed_sizes=["in_features"])

batch_size = 16
in_features = 64
out_features = 16


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(in_features, out_features) * 4)

    def forward(self, x):
        return torch.nn.functional.gelu(x @ self.weight)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
