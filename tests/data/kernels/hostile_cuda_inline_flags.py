"""load_inline: extra_cuda_cflags define a macro and add an include path."""
import torch
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cfloat>

__global__ void touch(float* y) { }

torch::Tensor softmax_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    touch<<<1, 1>>>(y.data_ptr<float>());
    return y;
}
"""

cpp_source = "torch::Tensor softmax_cuda(torch::Tensor x);"

ext = load_inline(name="hostile_ext", cpp_sources=cpp_source, cuda_sources=cuda_source,
                  functions=["softmax_cuda"], verbose=False, extra_cuda_cflags=["-DEVIL=1", "-I/etc"], extra_ldflags=["-lcublas"])


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.softmax_cuda(x.contiguous())
