"""Square nn.Linear, LeakyReLU(0.05), the input added back, then LayerNorm (a post-norm residual layer)."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "leaky_relu", "residual", "layer_norm", "fused"])

batch_size = 512
features = 1024


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(features, features)
        self.norm = nn.LayerNorm(features)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0, 0.2)

    def forward(self, x):
        return self.norm(x + torch.nn.functional.leaky_relu(self.fc(x), 0.05))


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]


def get_input_variants():
    return [[torch.randn(1, features) * 5 + 20], [torch.randn(2, 9, features)]]
