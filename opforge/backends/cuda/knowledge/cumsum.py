"""Known-good CUDA cumsum: inclusive prefix sum along the last dim, one block per row walking it in
chunks of blockDim.x elements (a warp scan with __shfl_up_sync, the warp totals scanned through
shared memory, a running carry), accumulated in fp64 like PyTorch's CPU cumsum."""
import torch

from opforge.cuda import load_cuda

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <cstdint>

#define FULL_MASK 0xffffffffu

// Inclusive scan across the warp (Hillis-Steele: 5 steps). Every lane must take part (full mask),
// so lanes past the row's end scan a 0 instead of skipping the call.
__device__ __forceinline__ double warp_scan(double v, int lane) {
    #pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const double up = __shfl_up_sync(FULL_MASK, v, offset);
        if (lane >= offset) v += up;
    }
    return v;
}

// fp64 accumulation (an upcast; the output is fp32): a prefix sum that returns near zero after
// thousands of terms keeps the absolute rounding error of its largest partial sums, about 1e-4 in
// fp32 by 4096 columns. PyTorch's CPU cumsum accumulates float in double too.
__global__ void __launch_bounds__(256) cumsum_kernel(const float* __restrict__ x, float* __restrict__ y,
                                                     int cols) {
    __shared__ double warp_total[32];
    const int64_t base = (int64_t)blockIdx.x * cols;   // int64: rows * cols may pass 2**31
    const float* xr = x + base;
    float* yr = y + base;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    double carry = 0.0;                                // the row's sum before this chunk, in every thread
    for (int start = 0; start < cols; start += blockDim.x) {   // the same trip count for every thread
        const int c = start + threadIdx.x;
        double v = warp_scan(c < cols ? (double)xr[c] : 0.0, lane);
        if (lane == 31) warp_total[warp] = v;
        __syncthreads();                               // every warp total is written before any is read
        // Each warp scans the (at most 32) warp totals itself: lane w then holds warps 0..w.
        const double totals = warp_scan(lane < warps ? warp_total[lane] : 0.0, lane);
        const double before = __shfl_sync(FULL_MASK, totals, (warp + 31) & 31);  // warps 0..warp-1
        const double chunk = __shfl_sync(FULL_MASK, totals, 31);                 // the whole chunk
        if (c < cols) yr[c] = (float)(carry + (warp > 0 ? before : 0.0) + v);
        carry += chunk;
        __syncthreads();                               // all read warp_total before the next chunk writes it
    }
}

// Threads per row: one warp up to 1024 columns, doubling while each thread would get more than 16
// elements, at most 256 (8 warps). Always a multiple of 32, as the full-mask shuffles need. Many
// elements per thread keep the loads in flight on the GPU and cost the CPU emulator 4x less than
// 4 per thread (it runs every CUDA thread: 0.22 s instead of 0.85 s for a 512 x 512 softmax).
// A conditional, not a loop: opforge's static check allows no loops in host code.
static int row_threads(int cols) {
    return cols > 4096 ? 256 : cols > 2048 ? 128 : cols > 1024 ? 64 : 32;
}

extern "C" void cumsum_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0) return;  // an empty grid is a launch error
    cumsum_kernel<<<rows, row_threads(cols), 0, stream>>>(x, y, cols);
}
"""
_lib = load_cuda(CUDA_SRC)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()  # the kernel walks dense rows of the last dim
        y = torch.empty_like(x)
        cols = x.shape[-1] if x.dim() > 0 else 1
        rows = x.numel() // cols if cols > 0 else 0
        _lib.cumsum_launch(x, y, rows, cols)
        return y
