"""load_inline: tensor arithmetic through operators in a namespace-scope lambda."""
import torch
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cfloat>

__global__ void touch(float* y) { }

static auto twice = [](torch::Tensor a, torch::Tensor b) { return a * 0 + b; };

torch::Tensor softmax_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    touch<<<1, 1>>>(y.data_ptr<float>());
    return (twice)(y, x);
}
"""

cpp_source = "torch::Tensor softmax_cuda(torch::Tensor x);"

ext = load_inline(name="hostile_ext", cpp_sources=cpp_source, cuda_sources=cuda_source,
                  functions=["softmax_cuda"], verbose=False)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.softmax_cuda(x.contiguous())
