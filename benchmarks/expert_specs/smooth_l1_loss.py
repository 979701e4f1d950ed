"""Smooth L1 (Huber-like) loss with beta from the constructor, mean reduction."""
import torch

OPFORGE = dict(name="smooth_l1_loss", dtypes=["float32"], tags=["loss", "smooth_l1", "huber", "scalar-output"], family="loss")

batch_size = 4096
dim = 8192
beta = 1.0


class Model(torch.nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, predictions, targets):
        return torch.nn.functional.smooth_l1_loss(predictions, targets, beta=self.beta)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [beta]


def get_input_variants():
    # Differences on both sides of beta (the quadratic and the linear branch).
    return [
        [torch.randn(9, 2999) * 3, torch.randn(9, 2999)],
        [torch.randn(1, 17) * 0.1, torch.randn(1, 17) * 0.1],
        [torch.randn(2, 33, 1025), torch.randn(2, 33, 1025)],
    ]
