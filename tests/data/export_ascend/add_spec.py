"""A 2-input add, small: the AscendC backend's end-to-end tests verify against it (its candidates are
Add projects in both forms, as Huawei's and MultiKernelBench's first examples are)."""
import torch

OPFORGE = dict(name="add2", dtypes=["float32"], tags=["elementwise"], family="elementwise")

size = 65536  # 8 cores x 4 tiles x 2048 floats: the direct-launch candidate's tiling divides it evenly


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x + y


def get_inputs():
    return [torch.randn(size), torch.randn(size)]


def get_init_inputs():
    return []
