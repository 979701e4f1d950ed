"""Level-2 style: Linear, dropout (inference: the identity), mean over features, then softmax."""
import torch
import torch.nn as nn

batch_size = 128
in_features = 100
out_features = 50
dropout_p = 0.2


class Model(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout_p = dropout_p

    def forward(self, x):
        x = self.matmul(x)
        x = torch.nn.functional.dropout(x, p=self.dropout_p, training=False)
        x = torch.mean(x, dim=1, keepdim=True)
        x = torch.softmax(x, dim=1)
        return x


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
