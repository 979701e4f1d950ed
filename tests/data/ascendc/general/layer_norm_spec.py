"""LayerNorm over the last dim with its affine weight and bias (KernelBench format, module-level sizes)."""
import torch

batch_size = 32
hidden = 1024
eps = 1e-5


class Model(torch.nn.Module):
    def __init__(self, hidden: int, eps: float):
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden, eps=eps)
        with torch.no_grad():  # not the default ones / zeros: the kernel must apply them
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, hidden) * 2 + 1]


def get_init_inputs():
    return [hidden, eps]
