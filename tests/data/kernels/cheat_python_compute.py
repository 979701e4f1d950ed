"""Cheat: no kernel launch at all; the softmax is computed in Python, element by element, with only
allocation-level tensor calls (item() and element assignment)."""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _unused_kernel(out_ptr):
    pass


def _python_softmax(x):
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        row = [x[i, j].item() for j in range(x.shape[1])]
        m = max(row)
        e = [math.exp(v - m) for v in row]
        s = sum(e)
        for j in range(x.shape[1]):
            out[i, j] = e[j] / s
    return out


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()  # the kernel indexes rows by n_cols: a strided input must be copied first
        return _python_softmax(x)
