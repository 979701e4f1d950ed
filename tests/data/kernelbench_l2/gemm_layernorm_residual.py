import torch
import torch.nn as nn

class Model(nn.Module):
    """
    A Linear layer, LayerNorm over the features, a residual add of the Linear's output and a clamp.
    """
    def __init__(self, in_features, out_features, clamp_min, clamp_max):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.layer_norm = nn.LayerNorm(out_features)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        y = self.linear(x)
        x = self.layer_norm(y) + y
        x = torch.clamp(x, min=self.clamp_min, max=self.clamp_max)
        return x

batch_size = 4096
in_features = 2048
out_features = 2048
clamp_min = -1.0
clamp_max = 1.0

def get_inputs():
    return [torch.rand(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, clamp_min, clamp_max]
