// opforge AscendC emulator host shim: torch/csrc/autograd/custom_function.h, which MultiKernelBench's bindings
// include for autograd functions; the forward pass they run needs the tensor API only. AutogradContext and
// Function exist so declarations compile; a backward pass is never run by a verification.
#pragma once
#include <torch/extension.h>

namespace torch {
namespace autograd {
struct AutogradContext {};
template <class T> struct Function {};
}  // namespace autograd
}  // namespace torch
