// opforge CUDA emulator: the CUDA runtime calls a launcher may make. Device memory is host memory
// here; device queries answer as an H100/H200 (sm_90, 132 SMs) would.
#pragma once
#include <cstdlib>
#include <cstring>
#include "emu_launch.h"

enum cudaError_t {
    cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9, cudaErrorInvalidDeviceFunction = 98, cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchFailure = 719, cudaErrorNotSupported = 801,
};
typedef cudaError_t cudaError;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4,
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8, cudaFuncAttributePreferredSharedMemoryCarveout = 9 };
enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMaxSharedMemoryPerBlock = 8, cudaDevAttrWarpSize = 10,
    cudaDevAttrMultiProcessorCount = 16, cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};

static inline cudaError_t cudaGetLastError() {
    cudaError_t e = (cudaError_t)opforge_emu::E.last_error;
    opforge_emu::E.last_error = 0;
    return e;
}
static inline cudaError_t cudaPeekAtLastError() { return (cudaError_t)opforge_emu::E.last_error; }
static inline const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
        case cudaSuccess: return "no error";
        case cudaErrorInvalidValue: return "invalid argument";
        case cudaErrorMemoryAllocation: return "out of memory";
        case cudaErrorInvalidConfiguration: return "invalid configuration argument";
        case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
        case cudaErrorLaunchFailure: return "unspecified launch failure";
        default: return "unknown error";
    }
}
static inline const char* cudaGetErrorName(cudaError_t e) {
    switch (e) {
        case cudaSuccess: return "cudaSuccess";
        case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
        case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
        case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
        case cudaErrorLaunchOutOfResources: return "cudaErrorLaunchOutOfResources";
        case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
        default: return "cudaErrorUnknown";
    }
}
static inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
static inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
static inline cudaError_t cudaMemset(void* p, int v, size_t n) { std::memset(p, v, n); return cudaSuccess; }
static inline cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t = nullptr) { return cudaMemset(p, v, n); }
static inline cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) { std::memmove(d, s, n); return cudaSuccess; }
static inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t = nullptr) {
    return cudaMemcpy(d, s, n, k);
}
template <class T> static inline cudaError_t cudaMalloc(T** p, size_t n) {
    *p = (T*)std::aligned_alloc(256, (n + 255) / 256 * 256 + 256);
    if (*p) { opforge_emu::add_range(*p, n); opforge_emu::track(*p, n, 1, -1); }
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaFree(void* p) {
    opforge_emu::remove_range(p);
    opforge_emu::untrack(p);
    std::free(p);
    return cudaSuccess;
}
template <class T> static inline cudaError_t cudaMallocAsync(T** p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }
static inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return cudaFree(p); }

template <class F> static inline cudaError_t cudaFuncSetAttribute(F* fn, cudaFuncAttribute attr, int value) {
    using namespace opforge_emu;
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess;
    if (value < 0 || (size_t)value > kSmemMax) return (cudaError_t)(E.last_error = cudaErrorInvalidValue);
    for (int i = 0; i < g_nattrs; ++i)
        if (g_attrs[i].fn == (const void*)fn) { g_attrs[i].max_dynamic_smem = value; return cudaSuccess; }
    if (g_nattrs < 256) g_attrs[g_nattrs++] = FuncAttr{(const void*)fn, value};
    return cudaSuccess;
}

static inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
    switch (attr) {
        case cudaDevAttrMaxThreadsPerBlock: *value = 1024; return cudaSuccess;
        case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)opforge_emu::kSmemDefault; return cudaSuccess;
        case cudaDevAttrWarpSize: *value = 32; return cudaSuccess;
        case cudaDevAttrMultiProcessorCount: *value = 132; return cudaSuccess;
        case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = 233472; return cudaSuccess;
        case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)opforge_emu::kSmemMax; return cudaSuccess;
        default: return cudaErrorInvalidValue;
    }
}

template <class T> static inline cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t n, size_t offset = 0,
                                                               cudaMemcpyKind = cudaMemcpyHostToDevice) {
    if (offset + n > sizeof(T)) return cudaErrorInvalidValue;
    std::memcpy((char*)&symbol + offset, src, n);
    return cudaSuccess;
}
