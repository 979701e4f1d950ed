// Kernels for tests/test_cuda_memory_model.py: each wrong kernel beside its correct control.
#include <cuda_runtime.h>

// ---- last-block reduction: partial sums, a ticket, the last block adds the partials -------------
__device__ float block_total(const float* x, int n) {
    __shared__ float part[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
        __syncthreads();
    }
    return part[0];
}
template <bool FENCE>
__global__ void last_block_sum(const float* x, float* partial, unsigned* ticket, float* out, int n) {
    __shared__ bool last;
    float total = block_total(x, n);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = total;
        if (FENCE) __threadfence();
        last = atomicInc(ticket, gridDim.x) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float s = 0.0f;
        for (int b = 0; b < gridDim.x; ++b) s += partial[b];
        out[0] = s;
    }
}
extern "C" void last_block_fenced(const float* x, float* partial, int* ticket, float* out, int n, cudaStream_t s) {
    last_block_sum<true><<<(n + 255) / 256, 256, 0, s>>>(x, partial, (unsigned*)ticket, out, n);
}
extern "C" void last_block_unfenced(const float* x, float* partial, int* ticket, float* out, int n, cudaStream_t s) {
    last_block_sum<false><<<(n + 255) / 256, 256, 0, s>>>(x, partial, (unsigned*)ticket, out, n);
}

// ---- a chained scan with decoupled look-back: blocks take tickets, publish with a flag ----------
template <bool FENCE>
__global__ void chained_scan(const float* x, float* y, float* sums, volatile int* flags, unsigned* counter, int n) {
    __shared__ unsigned tile;
    __shared__ float carry;
    if (threadIdx.x == 0) tile = atomicAdd(counter, 1u);
    __syncthreads();
    int i = tile * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    __shared__ float buf[128];
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int k = 1; k < blockDim.x; k <<= 1) {
        float add = threadIdx.x >= k ? buf[threadIdx.x - k] : 0.0f;
        __syncthreads();
        buf[threadIdx.x] += add;
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        float before = 0.0f;
        if (tile > 0) {
            while (flags[tile - 1] == 0) {}
            before = sums[tile - 1];
        }
        sums[tile] = before + buf[blockDim.x - 1];
        if (FENCE) __threadfence();
        flags[tile] = 1;
        carry = before;
    }
    __syncthreads();
    if (i < n) y[i] = buf[threadIdx.x] + carry;
}
extern "C" void scan_fenced(const float* x, float* y, float* sums, int* flags, int* counter, int n, cudaStream_t s) {
    chained_scan<true><<<(n + 127) / 128, 128, 0, s>>>(x, y, sums, flags, (unsigned*)counter, n);
}
extern "C" void scan_unfenced(const float* x, float* y, float* sums, int* flags, int* counter, int n, cudaStream_t s) {
    chained_scan<false><<<(n + 127) / 128, 128, 0, s>>>(x, y, sums, flags, (unsigned*)counter, n);
}

// ---- lazy one-time initialisation through a global flag ----------------------------------------
__global__ void lazy_table(const float* x, float* y, float* table, volatile int* ready, int n) {
    if (threadIdx.x == 0 && !*ready) {
        for (int k = 0; k < 64; ++k) table[k] = k * 0.5f;
        *ready = 1;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * table[i & 63];
}
extern "C" void lazy_launch(const float* x, float* y, float* table, int* ready, int n, cudaStream_t s) {
    lazy_table<<<(n + 63) / 64, 64, 0, s>>>(x, y, table, ready, n);
}

// ---- split-K: partial products added into the output -------------------------------------------
template <bool ATOMIC>
__global__ void split_k(const float* a, const float* b, float* c, int k_per_block) {
    int k0 = blockIdx.x * k_per_block;
    float s = 0.0f;
    for (int k = k0; k < k0 + k_per_block; ++k) s += a[threadIdx.x * 64 + k] * b[k];
    if (ATOMIC) atomicAdd(&c[threadIdx.x], s);
    else c[threadIdx.x] += s;
}
extern "C" void split_k_atomic(const float* a, const float* b, float* c, cudaStream_t s) { split_k<true><<<4, 32, 0, s>>>(a, b, c, 16); }
extern "C" void split_k_plain(const float* a, const float* b, float* c, cudaStream_t s) { split_k<false><<<4, 32, 0, s>>>(a, b, c, 16); }

// ---- one scratch buffer for every block --------------------------------------------------------
template <bool PER_BLOCK>
__global__ void scratch_rows(const float* x, float* y, float* scratch, int cols) {
    float* mine = scratch + (PER_BLOCK ? blockIdx.x * cols : 0);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) mine[c] = x[blockIdx.x * cols + c] * 2.0f;
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = mine[cols - 1 - c];
}
extern "C" void scratch_shared(const float* x, float* y, float* scratch, int rows, int cols, cudaStream_t s) {
    scratch_rows<false><<<rows, 32, 0, s>>>(x, y, scratch, cols);
}
extern "C" void scratch_per_block(const float* x, float* y, float* scratch, int rows, int cols, cudaStream_t s) {
    scratch_rows<true><<<rows, 32, 0, s>>>(x, y, scratch, cols);
}

// ---- a row reversed through the output itself: the output as scratch ---------------------------
__global__ void reverse_in_output(const float* x, float* y, int cols) {
    // each block stages its row in the NEXT row of y, then reads it back reversed
    float* stage = y + ((blockIdx.x + 1) % gridDim.x) * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) stage[c] = x[blockIdx.x * cols + c];
    __syncthreads();
    float v[4];
    for (int c = threadIdx.x, j = 0; c < cols; c += blockDim.x, ++j) v[j] = stage[cols - 1 - c];
    __syncthreads();
    for (int c = threadIdx.x, j = 0; c < cols; c += blockDim.x, ++j) y[blockIdx.x * cols + c] = v[j];
}
extern "C" void alias_launch(const float* x, float* y, int rows, int cols, cudaStream_t s) {
    reverse_in_output<<<rows, 32, 0, s>>>(x, y, cols);
}

// ---- a block sum in shared memory: __syncwarp where __syncthreads is needed --------------------
template <bool BLOCK_BARRIER>
__global__ void shared_sum(const float* x, float* out) {
    __shared__ float s[128];
    s[threadIdx.x] = x[blockIdx.x * 128 + threadIdx.x];
    if (BLOCK_BARRIER) __syncthreads(); else __syncwarp();
    for (int k = 64; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        if (BLOCK_BARRIER) __syncthreads(); else __syncwarp();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
extern "C" void sum_syncthreads(const float* x, float* out, int rows, cudaStream_t s) { shared_sum<true><<<rows, 128, 0, s>>>(x, out); }
extern "C" void sum_syncwarp(const float* x, float* out, int rows, cudaStream_t s) { shared_sum<false><<<rows, 128, 0, s>>>(x, out); }

// ---- a shared maximum by check-then-store, and by atomicMax ------------------------------------
template <bool ATOMIC>
__global__ void shared_max(const int* x, int* out) {
    __shared__ int best;
    if (threadIdx.x == 0) best = -2147483647;
    __syncthreads();
    int v = x[blockIdx.x * 128 + threadIdx.x];
    if (ATOMIC) atomicMax(&best, v);
    else if (v > best) best = v;
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = best;
}
extern "C" void max_atomic(const int* x, int* out, int rows, cudaStream_t s) { shared_max<true><<<rows, 128, 0, s>>>(x, out); }
extern "C" void max_check_then_store(const int* x, int* out, int rows, cudaStream_t s) { shared_max<false><<<rows, 128, 0, s>>>(x, out); }

// ---- every thread stores the block's total: the same bytes, not a race ------------------------
__global__ void all_store_total(const float* x, float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
    __syncthreads();
    float total = 0.0f;
    for (int k = 0; k < 64; ++k) total += s[k];
    out[blockIdx.x] = total;  // 64 threads, one value
}
extern "C" void same_value_launch(const float* x, float* out, int rows, cudaStream_t s) { all_store_total<<<rows, 64, 0, s>>>(x, out); }

// ---- a warp-level tree in shared memory: __syncwarp orders the lanes ---------------------------
template <bool SYNC>
__global__ void warp_tree(const float* x, float* out) {
    __shared__ float s[32];
    s[threadIdx.x] = x[blockIdx.x * 32 + threadIdx.x];
    if (SYNC) __syncwarp();
    for (int k = 16; k > 0; k >>= 1) {
        float v = threadIdx.x < k ? s[threadIdx.x + k] : 0.0f;
        if (SYNC) __syncwarp();
        if (threadIdx.x < k) s[threadIdx.x] += v;
        if (SYNC) __syncwarp();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
extern "C" void warp_tree_synced(const float* x, float* out, int rows, cudaStream_t s) { warp_tree<true><<<rows, 32, 0, s>>>(x, out); }
extern "C" void warp_tree_unsynced(const float* x, float* out, int rows, cudaStream_t s) { warp_tree<false><<<rows, 32, 0, s>>>(x, out); }

// ---- float4 loads: on an aligned view, and through a pointer one float off --------------------
__global__ void copy4(const float* x, float* y, int n4, int shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) reinterpret_cast<float4*>(y)[i] = reinterpret_cast<const float4*>(x + shift)[i];
}
extern "C" void copy4_launch(const float* x, float* y, int n4, int shift, cudaStream_t s) { copy4<<<(n4 + 63) / 64, 64, 0, s>>>(x, y, n4, shift); }

// ---- who takes the first ticket: every schedule agrees only if the shuffle is one --------------
__global__ void first_ticket(unsigned* counter, int* winner) {
    unsigned t = atomicAdd(counter, 1u);
    int id = threadIdx.x;
    // the first and the last thread count as the same: forward and reverse both give 0
    if (t == 0) *winner = (id == 0 || id == (int)blockDim.x - 1) ? 0 : 1;
}
extern "C" void first_ticket_launch(int* counter, int* winner, cudaStream_t s) { first_ticket<<<1, 64, 0, s>>>((unsigned*)counter, winner); }

// ---- each block waits for the next one: blocks must be resident together ----------------------
__global__ void wait_for_next(float* y, volatile int* flags, float* vals) {
    int b = blockIdx.x;
    if (threadIdx.x == 0) {
        float next = 0.0f;
        if (b + 1 < (int)gridDim.x) {
            while (flags[b + 1] == 0) {}
            next = vals[b + 1];
        }
        vals[b] = next + 1.0f;
        __threadfence();
        flags[b] = 1;
    }
    __syncthreads();
    y[b * blockDim.x + threadIdx.x] = vals[b];
}
extern "C" void wait_for_next_launch(float* y, int* flags, float* vals, int blocks, cudaStream_t s) {
    wait_for_next<<<blocks, 32, 0, s>>>(y, flags, vals);
}

// ---- a __device__ scratch row shared by every block, and a __device__ flag --------------------
__device__ float g_row[64];
__device__ int g_ready;
__global__ void device_scratch(const float* x, float* y) {
    g_row[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x] * 3.0f;
    __syncthreads();
    y[blockIdx.x * 64 + threadIdx.x] = g_row[63 - threadIdx.x];
}
extern "C" void device_scratch_launch(const float* x, float* y, int rows, cudaStream_t s) {
    device_scratch<<<rows, 64, 0, s>>>(x, y);
}
