// opforge CUDA emulator: qualifiers, dim3 and the built-in vector types, for host C++17.
#pragma once
#include <cstddef>
#include <cstdint>

#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __inline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __constant__
#define __grid_constant__
// Blocks run one at a time, so one static object per __shared__ variable is the block's copy.
#define __shared__ static
#define __CUDACC__ 1
#define __CUDA_ARCH__ 900
#define __NVCC__ 1
#define __CUDACC_VER_MAJOR__ 13  // as the nvcc opforge builds with (toolchain.py)
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
#define CUDART_VERSION 13000
#define __CUDART_API_VERSION 13000

#define OPFORGE_VEC2(T, N, A) struct __attribute__((aligned(A))) N##2 { T x, y; }; \
    static inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define OPFORGE_VEC3(T, N) struct N##3 { T x, y, z; }; \
    static inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define OPFORGE_VEC4(T, N, A) struct __attribute__((aligned(A))) N##4 { T x, y, z, w; }; \
    static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
#define OPFORGE_VECS(T, N, A2, A4) OPFORGE_VEC2(T, N, A2) OPFORGE_VEC3(T, N) OPFORGE_VEC4(T, N, A4)

OPFORGE_VECS(float, float, 8, 16)
OPFORGE_VECS(double, double, 16, 16)
OPFORGE_VECS(int, int, 8, 16)
OPFORGE_VECS(unsigned, uint, 8, 16)
OPFORGE_VECS(signed char, char, 2, 4)
OPFORGE_VECS(unsigned char, uchar, 2, 4)
OPFORGE_VECS(short, short, 4, 8)
OPFORGE_VECS(unsigned short, ushort, 4, 8)
OPFORGE_VECS(long long, longlong, 16, 16)
OPFORGE_VECS(unsigned long long, ulonglong, 16, 16)
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};


static constexpr int warpSize = 32;
