import torch
import torch.nn as nn

class Model(nn.Module):
    """
    A model that applies a linear layer, a sigmoid, a row sum, then LogSumExp over the batch.
    """
    def __init__(self, input_size, hidden_size):
        super(Model, self).__init__()
        self.linear = nn.Linear(input_size, hidden_size)

    def forward(self, x):
        x = self.linear(x)
        x = torch.sigmoid(x)
        x = torch.logsumexp(x, dim=1)
        return x

batch_size = 16384
input_size = 2048
hidden_size = 4096

def get_inputs():
    return [torch.rand(batch_size, input_size)]

def get_init_inputs():
    return [input_size, hidden_size]
