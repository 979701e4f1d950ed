// The launch-resource model's kernels (tests/test_cuda_limits.py): one source, one nvcc compile.
// heavy: ptxas gives it ~128 registers (96 live floats), so 1024 threads need 128K > 64K registers.
__global__ void heavy(const float* x, float* y, int n) {
    float acc[96];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < 96; ++k) acc[k] = x[(i + k * 97) % n];
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int k = 0; k < 96; ++k) acc[k] = acc[k] * acc[(k * 7 + r) % 96] + acc[(k + 1) % 96];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 96; ++k) s += acc[k] * (k + 1);
    if (i < n) y[i] = s;
}

extern "C" void run_heavy(const float* x, float* y, int n, int threads, cudaStream_t stream) {
    heavy<<<(n + threads - 1) / threads, threads, 0, stream>>>(x, y, n);
}

// 40 KB of static shared memory; the launch adds `dyn` bytes of dynamic shared memory.
__global__ void staged(float* y, int n) {
    __shared__ float tile[10240];
    extern __shared__ float extra[];
    int t = threadIdx.x;
    tile[t] = (float)t;
    extra[t] = 1.0f;
    __syncthreads();
    if (t < n) y[t] = tile[blockDim.x - 1 - t] + extra[t];
}

extern "C" void run_staged(float* y, int n, int dyn, int opt_in, cudaStream_t stream) {
    if (opt_in) cudaFuncSetAttribute(staged, cudaFuncAttributeMaxDynamicSharedMemorySize, dyn);
    staged<<<1, n, dyn, stream>>>(y, n);
}

__global__ void __launch_bounds__(256) bounded(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * i;
}

extern "C" void run_bounded(float* y, int n, int threads, cudaStream_t stream) {
    bounded<<<(n + threads - 1) / threads, threads, 0, stream>>>(y, n);
}

// Each thread allocates `bytes` from the device heap and writes 1 where malloc succeeded.
__global__ void heap(float* ok, unsigned long long bytes) {
    char* p = (char*)malloc(bytes);
    ok[threadIdx.x] = p != nullptr ? 1.0f : 0.0f;
    if (p) {
        p[bytes - 1] = 1;
        free(p);
    }
}

extern "C" void run_heap(float* ok, long long bytes, long long heap_limit, cudaStream_t stream) {
    if (heap_limit) cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)heap_limit);
    heap<<<1, 1, 0, stream>>>(ok, (unsigned long long)bytes);
}

// Not a tail call (the result is used after it): ptxas keeps a stack frame per level.
__device__ __noinline__ int depth_sum(int d) {
    if (d <= 0) return 1;
    int r = depth_sum(d - 1);
    return r * 3 + d;
}

__global__ void recurse(int* out, int d) { out[threadIdx.x] = depth_sum(d); }

extern "C" void run_recurse(int* out, int depth, cudaStream_t stream) {
    recurse<<<1, 32, 0, stream>>>(out, depth);
}

// A device-heap block is device memory: a write one element past it is out of bounds.
__global__ void heap_overrun(float* out, int n) {
    float* p = (float*)malloc(n * sizeof(float));
    if (!p) return;
    for (int i = 0; i <= n; ++i) p[i] = 1.0f;
    out[0] = p[0];
    free(p);
}

extern "C" void run_heap_overrun(float* out, int n, cudaStream_t stream) {
    heap_overrun<<<1, 1, 0, stream>>>(out, n);
}
