"""nn.Linear, ReLU, then LayerNorm over the output features."""
import torch
import torch.nn as nn

OPFORGE = dict(family="fusion", tags=["gemm", "linear", "relu", "layer_norm", "fused"])

batch_size = 512
in_features = 1024
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0, 0.2)

    def forward(self, x):
        return self.norm(torch.relu(self.fc(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def get_input_variants():
    # in_features is fixed by the weight: the variants change the rows (and add a leading dim).
    return [[torch.randn(1, in_features)], [torch.randn(3, 7, in_features) * 4]]
