"""Known-good CUDA row_argmax: the index (int64) of the first max of each row, one block per row
(strided, coalesced loads into a per-thread (value, index) pair, then a warp-shuffle +
shared-memory block reduction that keeps the smaller index on ties and treats NaN as the max)."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <climits>
#include <cmath>
#include <cstdint>

#define FULL_MASK 0xffffffffu

// Fold (v2, i2) into (v, i) with torch.argmax's rules: the larger value wins; NaN counts as larger
// than any number; on equal values (two NaNs included) the smaller index wins, so the result does
// not depend on which lane or warp held which element. The identity is (-inf, INT_MAX): any real
// element beats it, a -inf one by its smaller index.
__device__ __forceinline__ void pick(float& v, int& i, float v2, int i2) {
    const bool nan1 = v != v, nan2 = v2 != v2;
    const bool wins = nan2 ? (!nan1 || i2 < i) : (!nan1 && (v2 > v || (v2 == v && i2 < i)));
    if (wins) { v = v2; i = i2; }
}

// Butterfly (xor) reduction of the pairs: every lane ends with the warp's winner. The full mask is
// right only because all 32 lanes of every warp reach this call (blockDim.x is a multiple of 32).
__device__ __forceinline__ void warp_pick(float& v, int& i) {
    #pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        float v2 = __shfl_xor_sync(FULL_MASK, v, offset);
        int i2 = __shfl_xor_sync(FULL_MASK, i, offset);
        pick(v, i, v2, i2);
    }
}

__global__ void __launch_bounds__(256) row_argmax_kernel(const float* __restrict__ x,
                                                         int64_t* __restrict__ out, int cols) {
    __shared__ float part_v[32];
    __shared__ int part_i[32];
    const float* xr = x + (int64_t)blockIdx.x * cols;   // int64: rows * cols may pass 2**31
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    float v = -INFINITY;
    int i = INT_MAX;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)  // ascending: an equal later value never wins
        pick(v, i, xr[c], c);
    warp_pick(v, i);
    if (lane == 0) { part_v[warp] = v; part_i[warp] = i; }
    __syncthreads();                       // every warp's winner is written before any is read
    v = lane < warps ? part_v[lane] : -INFINITY;
    i = lane < warps ? part_i[lane] : INT_MAX;
    warp_pick(v, i);
    if (threadIdx.x == 0) out[blockIdx.x] = i;
}

// Threads per row: one warp up to 1024 columns, doubling while each thread would get more than 16
// elements, at most 256 (8 warps). Always a multiple of 32, as the full-mask shuffles need. Many
// elements per thread keep the loads in flight on the GPU and cost the CPU emulator 4x less than
// 4 per thread (it runs every CUDA thread: 0.22 s instead of 0.85 s for a 512 x 512 softmax).
// A conditional, not a loop: opforge's static check allows no loops in host code.
static int row_threads(int cols) {
    return cols > 4096 ? 256 : cols > 2048 ? 128 : cols > 1024 ? 64 : 32;
}

extern "C" void row_argmax_launch(const float* x, int64_t* out, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;  // an empty grid is a launch error (torch rejects cols == 0)
    row_argmax_kernel<<<rows, row_threads(cols), 0, stream>>>(x, out, cols);
}
"""
_lib = load_cuda(CUDA_SRC)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()  # the kernel walks dense rows of the last dim
        out = torch.empty(x.shape[:-1], dtype=torch.int64, device=x.device)
        _lib.row_argmax_launch(x, out, out.numel(), x.shape[-1])
        return out
