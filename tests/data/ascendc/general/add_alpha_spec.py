"""x + alpha * y with alpha a constructor argument (KernelBench format, module-level sizes)."""
import torch

batch_size = 16
dim = 4096
alpha = 0.5


class Model(torch.nn.Module):
    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return x + self.alpha * y


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [alpha]
