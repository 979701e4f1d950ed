import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Batched matrix multiplication, a scale, and a softmax over the last dim.
    """
    def __init__(self, scale):
        super(Model, self).__init__()
        self.scale = scale

    def forward(self, a, b):
        x = torch.bmm(a, b)
        x = x * self.scale
        x = torch.softmax(x, dim=-1)
        return x

batch_size = 128
m = 512
k = 256
n = 1024
scale = 0.125

def get_inputs():
    return [torch.rand(batch_size, m, k), torch.rand(batch_size, k, n)]

def get_init_inputs():
    return [scale]
