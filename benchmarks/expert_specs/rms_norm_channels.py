"""RMS normalisation over the channel dim (dim 1) of [batch, features, dim1, dim2], no weight."""
import torch

OPFORGE = dict(name="rms_norm_channels", dtypes=["float32"], tags=["norm", "rmsnorm", "strided", "channel"], family="norm")

batch_size = 16
features = 64
dim1 = 256
dim2 = 256
eps = 1e-5


class Model(torch.nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [eps]


def get_input_variants():
    return [[torch.randn(2, 37, 11, 13)], [torch.randn(1, 3, 65, 129)], [torch.randn(5, 129, 7, 9) * 4]]
