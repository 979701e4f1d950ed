// Kernels for tests/test_cuda_emulator_state.py (issue 33: poison, alignment and state across calls
// as on a GPU): one wrong and one correct behaviour each, in one library (one g++ build).
#include <cuda_runtime.h>
#include <cstdint>
#include <cstring>

// -- declarations the translator must register or leave alone without g++ refusing them ---------
typedef float real_t;
using index_t = int;
struct Pair { int a, b; };
template <int N> struct Holder { static constexpr int value = N; };
constexpr int kBlock = 128;
static const float kScale = 2.0f;
__device__ Pair g_pair = {1, 2}, g_pairs[2];
__device__ real_t (*g_fn)(real_t) = nullptr;
namespace detail { __device__ index_t g_in_namespace; }
namespace { __device__ float g_anonymous[3]; }
extern "C" { int g_in_extern_c_block; }
thread_local unsigned g_per_thread;
static auto g_deduced = 0u;
static auto g_closure = []() { static int n = 0; return ++n; };
__device__ __forceinline__ float twice(float v) { return v * kScale; }
static __device__ int g_unused(int v) { return v + Holder<3>::value; }

// -- a misaligned view keeps its offset: the kernel sees the tensor's address modulo 256 --------
__global__ void address_kernel(const float* x, int* out) { out[0] = (int)((uintptr_t)x % 256); }
extern "C" void address_launch(const float* x, int* out, cudaStream_t stream) {
    address_kernel<<<1, 1, 0, stream>>>(x, out);
}

// -- reads far outside x that only the unmapped fences see (memcpy: no element access to hook) --
__global__ void far_read_kernel(const float* x, float* y, long long at) {
    float v;
    memcpy(&v, x + at, sizeof v);
    y[0] = v;
}
extern "C" void far_read_launch(const float* x, float* y, long long at, cudaStream_t stream) {
    far_read_kernel<<<1, 1, 0, stream>>>(x, y, at);
}

// -- namespace-scope __shared__: poisoned before every block like a function-scope one ----------
__shared__ float tile[kBlock];
__global__ void tile_read_first(const float* x, float* y, int n) {  // reads tile before any write
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + tile[threadIdx.x];
}
__global__ void tile_write_first(const float* x, float* y, int n) {  // control: writes, syncs, reads
    static __shared__ float last[kBlock];  // `static __shared__`, as some CUDA code spells it
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.f;
    __syncthreads();
    last[threadIdx.x] = tile[threadIdx.x];
    if (i < n) y[i] = twice(last[threadIdx.x]);
}
extern "C" void tile_launch(const float* x, float* y, int n, int write_first, cudaStream_t stream) {
    if (write_first) tile_write_first<<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(x, y, n);
    else tile_read_first<<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(x, y, n);
}

// -- a launch-count time bomb in a __device__ counter -------------------------------------------
__device__ unsigned launches_seen;
__global__ void device_bomb_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) atomicAdd(&launches_seen, 1u);
    if (i < n) y[i] = atomicAdd(&launches_seen, 0u) > 20000 ? 0.f : x[i];  // atomic: not a race, only state
}
extern "C" void device_bomb_launch(const float* x, float* y, int n, cudaStream_t stream) {
    device_bomb_kernel<<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(x, y, n);
}

// -- the same bomb counted in a static local of the launcher, passed as an argument -------------
__global__ void host_bomb_kernel(const float* x, float* y, int n, int calls) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = calls > 20000 ? 0.f : x[i];
}
extern "C" void host_bomb_launch(const float* x, float* y, int n, cudaStream_t stream) {
    static int calls = 0;
    ++calls;
    host_bomb_kernel<<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(x, y, n, calls);
}

// -- threadFenceReduction (CUDA samples): partial sums in a __device__ workspace, the last block
//    to retire (atomicInc on retirementCount) adds them and resets the counter to 0 -------------
__device__ unsigned int retirementCount = 0;
__device__ float partials[64];
__global__ void fence_reduce(const float* x, float* out, int n) {
    __shared__ float s[kBlock];
    __shared__ bool amLast;
    int i = blockIdx.x * kBlock + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.f;
    __syncthreads();
    for (int k = kBlock / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = s[0];
        __threadfence();
        unsigned int ticket = atomicInc(&retirementCount, gridDim.x);
        amLast = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (amLast && threadIdx.x == 0) {
        float total = 0.f;
        for (unsigned b = 0; b < gridDim.x; ++b) total += partials[b];
        out[0] = total;
        retirementCount = 0;
    }
}
extern "C" void fence_reduce_launch(const float* x, float* out, int n, cudaStream_t stream) {
    fence_reduce<<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(x, out, n);
}

// -- a table built lazily by the first call (a static flag in the launcher), read by every call;
//    within one call the second launch sees what the first wrote ---------------------------------
__device__ float table[kBlock];
__global__ void build_table() { table[threadIdx.x] = (float)threadIdx.x * 0.5f; }
__global__ void use_table(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + table[i % kBlock];
}
extern "C" void lazy_table_launch(const float* x, float* y, int n, cudaStream_t stream) {
    static bool built = false;
    if (!built) {
        build_table<<<1, kBlock, 0, stream>>>();
        built = true;
    }
    use_table<<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(x, y, n);
}

// -- a __device__ cache keyed by the input's address: a later call with new data at the same
//    address gets the first call's result --------------------------------------------------------
__device__ const float* cached_x = nullptr;
__device__ float cached_y[1024];
__global__ void cached_copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (cached_x != x) cached_y[i] = 3.f * x[i];
    y[i] = cached_y[i];
}
__global__ void remember(const float* x) { cached_x = x; }
extern "C" void cached_launch(const float* x, float* y, int n, cudaStream_t stream) {
    cached_copy<<<(n + kBlock - 1) / kBlock, kBlock, 0, stream>>>(x, y, n);
    remember<<<1, 1, 0, stream>>>(x);
}
