// Kernels for tests/test_cuda_emulator.py: one correct or broken behaviour each, all in one
// library so the tests share a single g++ build.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdint>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float red[BLOCK];
    int tid = threadIdx.x;
    const float* xr = x + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = tid; c < cols; c += BLOCK) m = fmaxf(m, xr[c]);
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, off));
    if ((tid & 31) == 0) red[tid / 32] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < BLOCK / 32; ++w) m = fmaxf(m, red[w]);
    __syncthreads();
    float sum = 0.f;
    for (int c = tid; c < cols; c += BLOCK) sum += __expf(xr[c] - m);
    red[tid] = sum;
    __syncthreads();
#pragma unroll
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    for (int c = tid; c < cols; c += BLOCK) y[(size_t)blockIdx.x * cols + c] = __expf(xr[c] - m) * inv;
}

extern "C" void softmax_launch(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
    softmax_kernel<256><<<rows, 256, 0, stream>>>(x, y, cols);
}

__global__ void sum_no_sync(const float* x, float* out) {  // a tree reduction missing its __syncthreads
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 128 + t];
    for (int k = 64; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

extern "C" void racy_launch(const float* x, float* out, int blocks, cudaStream_t stream) {
    sum_no_sync<<<blocks, 128, 0, stream>>>(x, out);
}

__global__ void half_warp_shuffle(float* y) {
    float v = threadIdx.x;
    if (threadIdx.x < 16) v += __shfl_down_sync(0xffffffff, v, 8);
    y[threadIdx.x] = v;
}

extern "C" void deadlock_launch(float* y, cudaStream_t stream) { half_warp_shuffle<<<1, 32, 0, stream>>>(y); }

__global__ void write_one_past(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) y[i] = 1.0f;  // <= : one element too far
}

extern "C" void oob_launch(float* y, int n, cudaStream_t stream) {
    write_one_past<<<(n + 127) / 128 + 1, 128, 0, stream>>>(y, n);
}

__global__ void spin(int* flag) {
    while (atomicAdd(flag, 0) == 0) {
    }
}

extern "C" void spin_launch(int* flag, cudaStream_t stream) { spin<<<1, 1, 0, stream>>>(flag); }

__global__ void convert(const float* x, __half* h, __nv_bfloat16* b, float* h_back, float* b_back, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        h[i] = __float2half_rn(x[i]);
        b[i] = __float2bfloat16(x[i]);
        h_back[i] = __half2float(h[i]);
        b_back[i] = __bfloat162float(b[i]);
    }
}

extern "C" void convert_launch(const float* x, __half* h, __nv_bfloat16* b, float* hb, float* bb, int n, cudaStream_t s) {
    convert<<<(n + 255) / 256, 256, 0, s>>>(x, h, b, hb, bb, n);
}

__global__ void warp_ops(const int* x, int* out) {
    int lane = threadIdx.x & 31, v = x[threadIdx.x];
    int* o = out + threadIdx.x * 8;
    o[0] = __shfl_sync(0xffffffff, v, 3);
    o[1] = __shfl_up_sync(0xffffffff, v, 2);
    o[2] = __shfl_down_sync(0xffffffff, v, 5, 16);
    o[3] = __shfl_xor_sync(0xffffffff, v, 1);
    o[4] = (int)__ballot_sync(0xffffffff, v & 1);
    o[5] = __any_sync(0xffffffff, v == 7);
    o[6] = __all_sync(0xffffffff, v >= 0);
    unsigned low = 0;
    if (lane < 8) low = __ballot_sync(0x000000ff, lane & 2);  // a partial mask, only its lanes arrive
    o[7] = (int)low;
}

extern "C" void warp_launch(const int* x, int* out, cudaStream_t stream) { warp_ops<<<1, 64, 0, stream>>>(x, out); }

__global__ void histogram(const int* x, int n, int* bins) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[x[i]], 1);
}

extern "C" void histogram_launch(const int* x, int n, int* bins, int nbins, cudaStream_t stream) {
    cudaMemsetAsync(bins, 0, nbins * sizeof(int), stream);
    histogram<<<4, 64, 0, stream>>>(x, n, bins);
}

__global__ void reverse_rows(const float* x, float* y, int cols) {
    extern __shared__ __align__(16) float row[];
    const float* xr = x + blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) row[c] = xr[c];
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = row[cols - 1 - c];
}

__global__ void scale(float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= a;
}

extern "C" void reverse_scale_launch(const float* x, float* y, int rows, int cols, float a, cudaStream_t stream) {
    reverse_rows<<<rows, 64, cols * sizeof(float), stream>>>(x, y, cols);
    scale<<<dim3((rows * cols + 127) / 128), dim3(128), 0, stream>>>(y, a, rows * cols);
}

__global__ void trap_kernel(const float* x) {
    assert(x[threadIdx.x] >= 0.0f);
}

extern "C" void trap_launch(const float* x, cudaStream_t stream) { trap_kernel<<<1, 32, 0, stream>>>(x); }

extern "C" void too_big_launch(float* y, cudaStream_t stream) { scale<<<1, 2048, 0, stream>>>(y, 2.0f, 1); }

__global__ void sum_of_64(const float* x, float* out) {  // sums 64 slots, but only blockDim.x (32) are written
    __shared__ float s[64];
    s[threadIdx.x] = x[blockIdx.x * 32 + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int i = 0; i < 64; ++i) t += s[i];
        out[blockIdx.x] = t;
    }
}

extern "C" void uninit_shared_launch(const float* x, float* out, int blocks, cudaStream_t stream) {
    sum_of_64<<<blocks, 32, 0, stream>>>(x, out);
}

__global__ void wild_write(float* y) { *(float*)(uintptr_t)64 = y[0]; }

extern "C" void wild_launch(float* y, cudaStream_t stream) { wild_write<<<1, 1, 0, stream>>>(y); }

__global__ void past_dynamic(float* y) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = y[threadIdx.x];  // 33 threads, room for 32 floats
}

extern "C" void smem_oob_launch(float* y, cudaStream_t stream) {
    past_dynamic<<<1, 33, 32 * sizeof(float), stream>>>(y);
}

__global__ void read_outside_mask(float* y) {
    float v = threadIdx.x;
    if (threadIdx.x < 16) v = __shfl_down_sync(0x0000ffff, v, 8);  // lanes 8-15 read lanes 16-23
    y[threadIdx.x] = v;
}

extern "C" void outside_mask_launch(float* y, cudaStream_t stream) { read_outside_mask<<<1, 32, 0, stream>>>(y); }

template <typename T>
__global__ void axpy(T* y, const T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" void axpy_launch(double* y, const double* x, double a, int n, cudaStream_t stream) {
    axpy<<<(n + 63) / 64, 64, 0, stream>>>(y, x, a, n);  // T deduced, as nvcc does
}

__global__ void active_lanes(int* out) {
    int lane = threadIdx.x & 31;
    if (lane < 10) out[threadIdx.x] = (int)__activemask();  // the lanes that took this branch
    else out[threadIdx.x] = -1;
}

extern "C" void activemask_launch(int* out, cudaStream_t stream) { active_lanes<<<1, 64, 0, stream>>>(out); }

__global__ void prefix_across_blocks(float* y) {  // reads the previous block's output: order-dependent
    if (threadIdx.x == 0 && blockIdx.x > 0) y[blockIdx.x] += y[blockIdx.x - 1];
}

extern "C" void block_order_launch(float* y, int n, cudaStream_t stream) { prefix_across_blocks<<<n, 32, 0, stream>>>(y); }

__global__ void scribble(const float* x, float* y) {
    y[threadIdx.x] = x[threadIdx.x];
    const_cast<float*>(x)[threadIdx.x] = 0.0f;  // the input is const
}

extern "C" void const_write_launch(const float* x, float* y, cudaStream_t stream) { scribble<<<1, 8, 0, stream>>>(x, y); }

__global__ void warp_sync_ops(int* out) {  // __syncwarp() orders shared memory within a warp
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncwarp();
    int mirrored = s[(threadIdx.x & ~31) + 31 - (threadIdx.x & 31)];
    __syncwarp(0xffffffff);
    int total = (int)__reduce_add_sync(0xffffffffu, (unsigned)threadIdx.x);
    int odd = __syncthreads_count(threadIdx.x & 1);
    out[threadIdx.x * 3] = mirrored;
    out[threadIdx.x * 3 + 1] = total;
    out[threadIdx.x * 3 + 2] = odd;
}

extern "C" void warp_sync_launch(int* out, cudaStream_t stream) { warp_sync_ops<<<1, 64, 0, stream>>>(out); }

extern "C" void endless_launcher_launch(float* y, cudaStream_t stream) {
    for (;;) scale<<<1, 1, 0, stream>>>(y, 1.0f, 1);  // the host loop never ends
}

__global__ void divergent_barriers(float* y) {
    if (threadIdx.x == 0) {
        y[0] = 1.0f;
        __syncthreads();
    } else {
        __syncthreads();
    }
    y[threadIdx.x] += 1.0f;
}

extern "C" void divergent_launch(float* y, cudaStream_t stream) { divergent_barriers<<<1, 64, 0, stream>>>(y); }

__global__ void shift_left(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i + 1];  // the last thread reads x[n]
}

extern "C" void oob_read_launch(const float* x, float* y, int n, cudaStream_t stream) {
    shift_left<<<(n + 255) / 256, 256, 0, stream>>>(x, y, n);
}

static float host_array[64];  // host memory: a GPU kernel cannot use it

extern "C" void host_pointer_launch(float* y, cudaStream_t stream) {
    scale<<<1, 64, 0, stream>>>(host_array, 2.0f, 64);
    cudaMemcpyAsync(y, host_array, 64 * sizeof(float), cudaMemcpyDeviceToDevice, stream);
}

extern "C" void workspace_launch(float* y, int n, cudaStream_t stream) {
    float* tmp = nullptr;
    cudaMalloc(&tmp, n * sizeof(float));
    cudaMemcpyAsync(tmp, y, n * sizeof(float), cudaMemcpyDeviceToDevice, stream);
    scale<<<(n + 63) / 64, 64, 0, stream>>>(tmp + 0, 3.0f, n);
    cudaMemcpyAsync(y, tmp, n * sizeof(float), cudaMemcpyDeviceToDevice, stream);
    cudaFree(tmp);
}

__device__ const float* cached_input = nullptr;  // a result cache keyed by the input pointer: a cheat

__global__ void copy_or_cached(const float* x, float* y, int n) {
    int i = threadIdx.x;
    if (i < n && cached_input != x) y[i] = x[i];
}

__global__ void remember(const float* x) { cached_input = x; }

extern "C" void cached_launch(const float* x, float* y, int n, cudaStream_t stream) {
    copy_or_cached<<<1, 64, 0, stream>>>(x, y, n);
    remember<<<1, 1, 0, stream>>>(x);
}
