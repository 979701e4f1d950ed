"""What host_ast.py's parse is given before a candidate's CUDA_SRC: CUDA's runtime as far as host code
may use it, declared in a few lines (PRELUDE; the headers a candidate includes are empty files,
STUBBED), or the emulator's whole header where that is not enough (FULL_PRELUDE)."""
from __future__ import annotations

import re

from pathlib import Path

FILE = "CUDA_SRC"
INCLUDE = Path(__file__).parent / "emulator" / "include"
# What the parse needs of CUDA's headers to read host code, declared here (the emulator's header,
# <cmath> and <utility> are 1.4 MB of text, and clang took 0.3-0.9 s over them: a candidate's
# `#include` of them finds an empty file instead, STUBBED). Host code may call nothing else
# (a name not declared here is judged by its name), so nothing else need be declared; the
# qualifiers are clang's CUDA attributes and `<<<...>>>` lowers to __cudaPushCallConfiguration.
STUBBED = ("cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "cuda_fp16.h", "cuda_bf16.h", "cmath", "math.h",
           "type_traits", "utility", "cuda/std/cmath", "cuda/std/utility", "cuda/std/type_traits",
           "cuda/std/cstdint", "cuda/std/limits", "math_constants.h", "device_functions.h",
           "device_launch_parameters.h", "torch/extension.h", "ATen/cuda/CUDAContext.h", "c10/cuda/CUDAStream.h")
MATH1 = ("exp exp2 expm1 log log2 log10 log1p sqrt cbrt sin cos tan asin acos atan sinh cosh tanh erf erfc "
         "ceil floor trunc round rint fabs")
MATH2 = "pow atan2 fmod hypot copysign fmin fmax remainder fdim"
PRELUDE = r"""#include <cstddef>
#include <cstdint>
#include <cfloat>
#include <climits>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
""" + "".join(f"#define __{q}__ __attribute__(({q}))\n" for q in ("global", "device", "host", "shared", "constant",
                                                                  "managed")) + r"""
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__
#define __CUDACC__ 1
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define HUGE_VALF (__builtin_huge_valf())
#define HUGE_VAL (__builtin_huge_val())
#define M_PI 3.14159265358979323846
#define M_LN2 0.69314718055994530942
#define M_SQRT2 1.41421356237309504880
#define CUDART_INF_F INFINITY
#define CUDART_NAN_F NAN
#define CUDART_PI_F 3.141592654f
#define OPFORGE_V(T, N) struct N##1 { T x; }; struct N##2 { T x, y; }; struct N##3 { T x, y, z; }; \
    struct N##4 { T x, y, z, w; }; N##2 make_##N##2(T, T); N##3 make_##N##3(T, T, T); N##4 make_##N##4(T, T, T, T);
OPFORGE_V(float, float) OPFORGE_V(double, double) OPFORGE_V(int, int) OPFORGE_V(unsigned, uint)
OPFORGE_V(signed char, char) OPFORGE_V(unsigned char, uchar) OPFORGE_V(short, short) OPFORGE_V(unsigned short, ushort)
OPFORGE_V(long long, longlong) OPFORGE_V(unsigned long long, ulonglong)
#undef OPFORGE_V
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
extern const uint3 threadIdx, blockIdx; extern const dim3 blockDim, gridDim; static constexpr int warpSize = 32;
struct __half { unsigned short x; }; struct __half2 { __half x, y; }; typedef __half half; typedef __half2 half2;
struct __nv_bfloat16 { unsigned short x; }; struct __nv_bfloat162 { __nv_bfloat16 x, y; };
typedef __nv_bfloat16 nv_bfloat16; typedef __nv_bfloat162 nv_bfloat162;
typedef struct CUstream_st* cudaStream_t;
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 }; typedef cudaError_t cudaError;
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
                      cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8, cudaFuncAttributePreferredSharedMemoryCarveout = 9 };
enum cudaFuncCache { cudaFuncCachePreferNone, cudaFuncCachePreferShared, cudaFuncCachePreferL1, cudaFuncCachePreferEqual };
enum cudaDeviceAttr { cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMaxSharedMemoryPerBlock = 8, cudaDevAttrWarpSize = 10,
                      cudaDevAttrMultiProcessorCount = 16, cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
                      cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
cudaError_t cudaGetLastError(); cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t); const char* cudaGetErrorName(cudaError_t);
cudaError_t cudaGetDevice(int*); cudaError_t cudaDeviceGetAttribute(int*, cudaDeviceAttr, int);
template <class F> cudaError_t cudaFuncSetAttribute(F*, cudaFuncAttribute, int);
template <class F> cudaError_t cudaFuncSetCacheConfig(F*, cudaFuncCache);
struct cudaFuncAttributes { size_t sharedSizeBytes, constSizeBytes, localSizeBytes; int maxThreadsPerBlock, numRegs,
    ptxVersion, binaryVersion, cacheModeCA, maxDynamicSharedSizeBytes, preferredShmemCarveout; };
struct cudaDeviceProp { char name[256]; size_t totalGlobalMem, sharedMemPerBlock, sharedMemPerBlockOptin,
    sharedMemPerMultiprocessor; int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3],
    multiProcessorCount, maxThreadsPerMultiProcessor, major, minor, regsPerMultiprocessor, l2CacheSize; };
cudaError_t cudaGetDeviceProperties(cudaDeviceProp*, int);
template <class F> cudaError_t cudaFuncGetAttributes(cudaFuncAttributes*, F*);
template <class F> cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int*, F, int, size_t);
template <class F> cudaError_t cudaOccupancyMaxPotentialBlockSize(int*, int*, F, size_t = 0, int = 0);
template <class F> cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t*, F, int, int);
cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t cudaMemsetAsync(void*, int, size_t, cudaStream_t = 0);
cudaError_t cudaMemcpyAsync(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t = 0);
cudaError_t cudaMemcpy2DAsync(void*, size_t, const void*, size_t, size_t, size_t, cudaMemcpyKind, cudaStream_t = 0);
namespace std { using ::size_t; template <class T> const T& min(const T&, const T&);
                template <class T> const T& max(const T&, const T&); int abs(int); long abs(long); long long abs(long long); }
template <class T> T min(T, T); template <class T> T max(T, T);
""" + "".join(f"float {f}f({a}); double {f}({a.replace('float', 'double')}); namespace std {{ float {f}({a}); "
              f"double {f}({a.replace('float', 'double')}); }}\n"
              for names, a in ((MATH1, "float"), (MATH2, "float, float")) for f in names.split()) + r"""extern "C" int __cudaPushCallConfiguration(dim3, dim3, size_t = 0, void* = 0);
"""
# The slow path (0.3-0.9 s): the emulator's own header, qualifiers redefined after it.
FULL_PRELUDE = ('#include "opforge_cuda_emu.h"\n#undef __CUDA_ARCH__\n'
                 + "".join(f"#undef __{q}__\n#define __{q}__ __attribute__(({q}))\n"
                           for q in ("global", "device", "host", "shared", "constant", "managed"))
                 + 'extern "C" int __cudaPushCallConfiguration(dim3, dim3, size_t = 0, void* = 0);\n')
PASSES = ("", "#define __CUDA_ARCH__ 900\n")  # nvcc's host pass; its device pass and the emulator


_MARKER = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"')


def line_map(text: str) -> list[tuple[str, int]]:
    """(file, line) of each line of g++'s output, from its line markers (`# 12 "CUDA_SRC" 2`):
    libclang reports the output's own lines."""
    found, where, line = [("", 0)], "", 0
    for row in text.split("\n"):
        m = _MARKER.match(row) if row.startswith("# ") else None
        found.append((where, line) if m is None else ("", 0))
        if m is not None:
            where, line = m.group(2), int(m.group(1))
        else:
            line += 1
    return found
