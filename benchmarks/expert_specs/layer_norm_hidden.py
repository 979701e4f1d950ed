"""LayerNorm (torch.nn.LayerNorm, elementwise affine) over the last dim of [batch, seq, hidden]."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 2048
hidden = 5120


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        with torch.no_grad():  # non-trivial affine parameters, so a kernel that ignores them fails
            self.ln.weight.copy_(torch.rand(hidden) + 0.5)
            self.ln.bias.copy_(torch.randn(hidden) * 0.1)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]


def get_input_variants():
    # The last dim is fixed by the weights: vary the leading dims and the scale/offset of the rows.
    return [[torch.randn(1, 1, hidden)], [torch.randn(3, 7, hidden) * 5 + 3], [torch.randn(19, hidden)]]
