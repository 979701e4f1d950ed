"""Variance and standard deviation over every dim of a tensor (torch.var(x), x.std(unbiased=False)):
one row kernel's per-row means and squared deviations, combined by a finish kernel."""
import torch

OPFORGE = dict(name="var_all_dims", dtypes=["float32"], tags=["reduction", "var", "std", "full"], family="reduction")

batch_size = 256
dim = 16384


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.var(x), x.std(unbiased=False)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


def get_input_variants():
    # a large mean (a raw sum of squares would cancel away the spread), other ranks, one row
    return [[torch.randn(300, 347) * 0.01 + 1000.0], [torch.randn(3, 5, 77)], [torch.randn(2, 3, 4, 129) - 50.0],
            [torch.randn(1, 7)]]
