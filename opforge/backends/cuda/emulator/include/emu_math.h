// opforge CUDA emulator: math and bit intrinsics, min/max overloads, atomics.
// The fast-math intrinsics (__expf, __sinf, __fdividef, ...) compute what the GPU's approximate
// instructions compute (emu_fast_math.h); the _rn ones and the plain functions are IEEE, as nvcc's
// default build (no --use_fast_math) makes them.
#pragma once
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>
#include <unordered_map>

#include "emu_fast_math.h"
#define __fsqrt_rn(x) sqrtf(x)
#define __dsqrt_rn(x) sqrt(x)
#define __fmaf_rn(a, b, c) fmaf(a, b, c)
#define __fmaf_rz(a, b, c) fmaf(a, b, c)
#define __fma_rn(a, b, c) fma(a, b, c)
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }

static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
static inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
static inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }
static inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
static inline int __float2int_rn(float f) { return (int)nearbyintf(f); }
static inline int __float2int_rz(float f) { return (int)truncf(f); }
static inline int __float2int_rd(float f) { return (int)floorf(f); }
static inline int __float2int_ru(float f) { return (int)ceilf(f); }
static inline unsigned __float2uint_rn(float f) { return (unsigned)nearbyintf(f); }
static inline unsigned __float2uint_rz(float f) { return (unsigned)truncf(f); }
static inline long long __float2ll_rn(float f) { return (long long)nearbyintf(f); }
static inline long long __float2ll_rz(float f) { return (long long)truncf(f); }
static inline int __double2int_rn(double d) { return (int)nearbyint(d); }
static inline float __double2float_rn(double d) { return (float)d; }
static inline float __int2float_rn(int i) { return (float)i; }
static inline float __uint2float_rn(unsigned i) { return (float)i; }
static inline float __ll2float_rn(long long i) { return (float)i; }
static inline double __int2double_rn(int i) { return (double)i; }

static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
static inline int __mul24(int a, int b) { return (int)(((long long)(a << 8 >> 8)) * (b << 8 >> 8)); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (((s >> (4 * i)) & 7) * 8)) & 0xff) << (8 * i);
    return r;
}
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    return (unsigned)(((((unsigned long long)hi << 32) | lo) << (s & 31)) >> 32);
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    return (unsigned)((((unsigned long long)hi << 32) | lo) >> (s & 31));
}

#define OPFORGE_MINMAX(T) static inline T min(T a, T b) { return a < b ? a : b; } \
                          static inline T max(T a, T b) { return a > b ? a : b; }
OPFORGE_MINMAX(int) OPFORGE_MINMAX(unsigned) OPFORGE_MINMAX(long long) OPFORGE_MINMAX(unsigned long long)
OPFORGE_MINMAX(long) OPFORGE_MINMAX(unsigned long)
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline float min(float a, int b) { return fminf(a, (float)b); }
static inline float min(int a, float b) { return fminf((float)a, b); }
static inline float max(float a, int b) { return fmaxf(a, (float)b); }
static inline float max(int a, float b) { return fmaxf((float)a, b); }
static inline double min(double a, float b) { return fmin(a, (double)b); }
static inline double min(float a, double b) { return fmin((double)a, b); }
static inline double max(double a, float b) { return fmax(a, (double)b); }
static inline double max(float a, double b) { return fmax((double)a, b); }
static inline unsigned min(int a, unsigned b) { return min((unsigned)a, b); }
static inline unsigned min(unsigned a, int b) { return min(a, (unsigned)b); }
static inline unsigned max(int a, unsigned b) { return max((unsigned)a, b); }
static inline unsigned max(unsigned a, int b) { return max(a, (unsigned)b); }
static inline unsigned umin(unsigned a, unsigned b) { return min(a, b); }
static inline unsigned umax(unsigned a, unsigned b) { return max(a, b); }
static inline long long llmin(long long a, long long b) { return min(a, b); }
static inline long long llmax(long long a, long long b) { return max(a, b); }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return min(a, b); }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return max(a, b); }

template <class T> static inline T __ldg(const T* p) { return *p; }
template <class T> static inline T __ldcg(const T* p) { return *p; }
template <class T> static inline T __ldca(const T* p) { return *p; }
template <class T> static inline T __ldcs(const T* p) { return *p; }
template <class T> static inline T __ldlu(const T* p) { return *p; }
template <class T> static inline T __ldcv(const T* p) { return *p; }
template <class T> static inline void __stcg(T* p, T v) { *p = v; }
template <class T> static inline void __stcs(T* p, T v) { *p = v; }
template <class T> static inline void __stwb(T* p, T v) { *p = v; }
template <class T> static inline void __stwt(T* p, T v) { *p = v; }
// The memory model (emu_mem.h): fences are release points, atomics strong accesses.
namespace opforge_emu {
static void fence(int scope);
static void strong_access(const volatile void* p, size_t size, int flags, void* pc);
static void preempt_point(const volatile void* p, size_t size, bool reads);
}
#define OPF_FENCE(scope) { __asm__ __volatile__("" ::: "memory"); ::opforge_emu::fence(scope); }
static inline void __threadfence() OPF_FENCE(1)
static inline void __threadfence_block() OPF_FENCE(0)
static inline void __threadfence_system() OPF_FENCE(1)
static inline void __nanosleep(unsigned) {}

// Atomics: fibers switch only at barriers and warp collectives, so a read-modify-write is atomic.
// A float atomic's rounding depends on the order the adds commit in. Per address the run counts the
// float atomics and keeps the largest magnitude they read, added or wrote: n adds reordered move a
// sum by about sqrt(n) roundings of that magnitude, which bounds how far two schedules may part.
namespace opforge_emu {
struct AtomicCell { unsigned long long count; double absmax; };
static bool g_float_atomics = false;
static std::unordered_map<const void*, AtomicCell> g_float_atomic_cells;
static inline double as_double(double x) { return x; }
static inline double as_double(float x) { return x; }
template <class T> static inline double as_double(T x) { return (double)(float)x; }  // __half, bf16
static inline double magnitude(double x) {
    double m = x < 0 ? -x : x;
    return m <= 1.7976931348623157e308 ? m : 0.0;  // NaN and inf bound nothing
}
static inline void note_float_atomic(const void* at, double old, double v, double now) {
    g_float_atomics = true;
    AtomicCell& cell = g_float_atomic_cells[at];
    ++cell.count;
    double m = fmax(magnitude(old), fmax(magnitude(v), magnitude(now)));
    if (m > cell.absmax) cell.absmax = m;
}
// max over addresses of sqrt(count) * largest magnitude: the schedules' rounding scale, in units of
// the type's epsilon.
static inline double float_atomic_spread() {
    double spread = 0.0;
    for (const auto& kv : g_float_atomic_cells) spread = fmax(spread, sqrt((double)kv.second.count) * kv.second.absmax);
    return spread;
}
}
// The compiler barrier keeps a spin on an atomic a loop that reloads memory, as on the GPU.
// An atomic is not instrumented as plain accesses: it is one strong read-modify-write (emu_mem.h).
#define OPF_ATOMIC_HOOK(a) ::opforge_emu::strong_access(a, sizeof(*a), 3, __builtin_return_address(0))
#define OPFORGE_RMW(name, T, expr) __attribute__((no_sanitize_thread, noinline)) static T name(T* a, T v) { \
    OPF_ATOMIC_HOOK(a); __asm__ __volatile__("" ::: "memory"); T old = *a; *a = (expr); \
    ::opforge_emu::preempt_point(a, sizeof(T), false); return old; }
#define OPFORGE_FRMW(name, T, expr) __attribute__((no_sanitize_thread, noinline)) static T name(T* a, T v) { \
    OPF_ATOMIC_HOOK(a); __asm__ __volatile__("" ::: "memory"); T old = *a; *a = (expr); \
    opforge_emu::note_float_atomic(a, opforge_emu::as_double(old), opforge_emu::as_double(v), opforge_emu::as_double(*a)); \
    return old; }
OPFORGE_RMW(atomicAdd, int, old + v) OPFORGE_RMW(atomicAdd, unsigned, old + v)
OPFORGE_RMW(atomicAdd, unsigned long long, old + v)
OPFORGE_FRMW(atomicAdd, float, old + v) OPFORGE_FRMW(atomicAdd, double, old + v)
OPFORGE_FRMW(atomicAdd, __half, old + v) OPFORGE_FRMW(atomicAdd, __nv_bfloat16, old + v)
OPFORGE_RMW(atomicSub, int, old - v) OPFORGE_RMW(atomicSub, unsigned, old - v)
OPFORGE_RMW(atomicExch, int, v) OPFORGE_RMW(atomicExch, unsigned, v)
OPFORGE_RMW(atomicExch, unsigned long long, v) OPFORGE_RMW(atomicExch, float, v)
#define OPFORGE_RMW_INT(name, expr) OPFORGE_RMW(name, int, expr) OPFORGE_RMW(name, unsigned, expr) \
    OPFORGE_RMW(name, long long, expr) OPFORGE_RMW(name, unsigned long long, expr)
OPFORGE_RMW_INT(atomicMax, old > v ? old : v) OPFORGE_RMW_INT(atomicMin, old < v ? old : v)
OPFORGE_RMW_INT(atomicAnd, old & v) OPFORGE_RMW_INT(atomicOr, old | v) OPFORGE_RMW_INT(atomicXor, old ^ v)
OPFORGE_RMW(atomicInc, unsigned, old >= v ? 0u : old + 1u)
OPFORGE_RMW(atomicDec, unsigned, (old == 0u || old > v) ? v : old - 1u)
#define OPFORGE_CAS(T) __attribute__((no_sanitize_thread, noinline)) static T atomicCAS(T* a, T cmp, T v) { \
    OPF_ATOMIC_HOOK(a); __asm__ __volatile__("" ::: "memory"); T old = *a; if (old == cmp) *a = v; \
    ::opforge_emu::preempt_point(a, sizeof(T), false); return old; }
OPFORGE_CAS(int) OPFORGE_CAS(unsigned) OPFORGE_CAS(unsigned long long) OPFORGE_CAS(unsigned short)
#define OPFORGE_SCOPED(name) template <class... A> static inline auto name##_block(A... a) { return name(a...); } \
                             template <class... A> static inline auto name##_system(A... a) { return name(a...); }
OPFORGE_SCOPED(atomicAdd) OPFORGE_SCOPED(atomicSub) OPFORGE_SCOPED(atomicExch) OPFORGE_SCOPED(atomicMax)
OPFORGE_SCOPED(atomicMin) OPFORGE_SCOPED(atomicAnd) OPFORGE_SCOPED(atomicOr) OPFORGE_SCOPED(atomicXor)
OPFORGE_SCOPED(atomicCAS) OPFORGE_SCOPED(atomicInc) OPFORGE_SCOPED(atomicDec)
