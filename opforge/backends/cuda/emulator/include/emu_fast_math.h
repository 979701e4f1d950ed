// opforge CUDA emulator: the fast-math intrinsics (__sinf, __expf, __fdividef, ...) computed the way
// an sm_70+ GPU computes them, so an emulated kernel sees the GPU's error, not libm's.
//
// What nvcc 13 emits for them (nvcc -ptx -arch=sm_90, default flags, i.e. -ftz=false):
//   __sinf(x), __cosf(x)   sin.approx.f32 / cos.approx.f32; in SASS `FMUL.RZ t, x, 0x3E22F983`
//                          (1/2pi rounded toward zero) then MUFU.SIN / MUFU.COS of t, in revolutions
//   __tanf(x)              div.approx.f32(sin.approx x, cos.approx x); __sincosf: both
//   __expf(x), __exp10f(x) ex2.approx.f32(x * 0x3FB8AA3B), ex2.approx.f32(x * 0x40549A78)
//   __log2f, __logf, __log10f   lg2.approx.f32(x), times 0x3F317218 or 0x3E9A209B for the last two
//   __powf(x, y)           ex2.approx.f32(y * lg2.approx.f32(x))  (x < 0 gives NaN)
//   __fdividef(x, y)       div.approx.f32: x * MUFU.RCP(y)
// Each product is an fp32 multiply (rounded to nearest; toward zero for sin/cos), as on the GPU.
// The range reduction is where sin/cos go wrong: t = x * (1/2pi) keeps 24 bits, so the fraction of
// a revolution that MUFU.SIN sees loses a bit for every doubling of |x| (error ~6.9e-4 at x = 1e4,
// 0.12 at 1e6, the result is unrelated to sin(x) past ~1e7 and exactly 0 once t is an integer).
// Inside [-pi, pi] the model is within 2^-21.6 of sin (2^-21.8 of cos): inside the Programming
// Guide's 2^-21.41 (2^-21.19 for __cosf). __expf's error grows with |x| through the rounding of
// x * log2(e): the model stays under the Guide's 2 + floor(|1.173 x|) ulp (up to 0.99 of it).
//
// The SFU (MUFU) itself is modelled as exact but for two documented properties: its results below
// 2^-126 are flushed, so MUFU.RCP(y) is 0 for 2^126 < |y| < 2^128 and __fdividef(x, y) is 0 there
// (NaN for x = inf), as the Guide says; MUFU.LG2 returns log2 of the significand as a fixed-point
// fraction (LG2_FRACTION_BITS), an absolute error, so __logf(1 + 1e-7) is off by far more than an
// ulp, as on the GPU (the Guide: an absolute bound in [0.5, 2], ulps outside). Its remaining error
// (about 1-2 ulp) is not modelled: it is far below the float32 comparison's 1e-4.
// Subnormals: without -ftz the PTX approx instructions keep them (SASS scales the operand into the
// SFU's range: ex2 below -126 as (2^(t/2))^2, lg2 and div of a subnormal by 2^24), which the model
// does. `--use_fast_math` (-ftz=true, plain sinf/expf and `/` approximate) is never emulated:
// opforge's own format cannot ask for it and load_inline candidates run on a GPU only.
#pragma once
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace opforge_emu {
namespace fast {
constexpr int LG2_FRACTION_BITS = 23;  // the coarsest grid that keeps __log10f within 2^-24 in [0.5, 2]
constexpr double TWO_PI = 6.283185307179586476925286766559;

static inline float from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline float flush(float r) { return std::fabs(r) < FLT_MIN ? 0.0f * r : r; }  // keeps the sign

// fp32 multiply rounded toward zero (FMUL.RZ): the double product of two floats is exact.
static inline float mul_rz(float a, float b) {
    double p = (double)a * (double)b;
    float r = (float)p;
    return std::fabs((double)r) > std::fabs(p) ? std::nextafterf(r, 0.0f) : r;
}
// MUFU.SIN / MUFU.COS take revolutions and use only the fraction of t.
static inline float mufu_sin(float t) { double r = (double)t - std::nearbyint((double)t); return (float)std::sin(TWO_PI * r); }
static inline float mufu_cos(float t) { double r = (double)t - std::nearbyint((double)t); return (float)std::cos(TWO_PI * r); }
static inline float mufu_ex2(float t) { return flush((float)std::exp2((double)t)); }
static inline float mufu_rcp(float y) { return flush((float)(1.0 / (double)y)); }
static inline float mufu_lg2(float x) {
    if (std::isnan(x) || x < 0.0f) return NAN;
    if (x == 0.0f) return -INFINITY;
    if (std::isinf(x)) return x;
    int e;
    double m = 2.0 * std::frexp((double)x, &e);  // x = m * 2^(e - 1), m in [1, 2)
    double grid = std::ldexp(1.0, LG2_FRACTION_BITS);
    return (float)((e - 1) + std::nearbyint(std::log2(m) * grid) / grid);
}

static inline float sin_approx(float x) { return mufu_sin(mul_rz(x, from_bits(0x3E22F983u))); }
static inline float cos_approx(float x) { return mufu_cos(mul_rz(x, from_bits(0x3E22F983u))); }
static inline float ex2_approx(float t) {
    if (t < -126.0f) { float h = mufu_ex2(t * 0.5f); return h * h; }
    return mufu_ex2(t);
}
static inline float lg2_approx(float x) {
    if (std::fabs(x) < FLT_MIN && x != 0.0f) return mufu_lg2(x * 16777216.0f) - 24.0f;
    return mufu_lg2(x);
}
static inline float div_approx(float a, float b) {
    if (std::fabs(b) < FLT_MIN) { a *= 16777216.0f; b *= 16777216.0f; }
    return a * mufu_rcp(b);
}
static inline float expf_approx(float x) { return ex2_approx(x * from_bits(0x3FB8AA3Bu)); }
static inline float exp10f_approx(float x) { return ex2_approx(x * from_bits(0x40549A78u)); }
static inline float logf_approx(float x) { return lg2_approx(x) * from_bits(0x3F317218u); }
static inline float log10f_approx(float x) { return lg2_approx(x) * from_bits(0x3E9A209Bu); }
static inline float powf_approx(float x, float y) { return ex2_approx(y * lg2_approx(x)); }
static inline float tanf_approx(float x) { return div_approx(sin_approx(x), cos_approx(x)); }
static inline void sincosf_approx(float x, float* s, float* c) { *s = sin_approx(x); *c = cos_approx(x); }
}  // namespace fast
}  // namespace opforge_emu

// glibc's math.h declares (unexported) __expf, __sinf, ...: these names must be macros.
#define __sinf(x) ::opforge_emu::fast::sin_approx(x)
#define __cosf(x) ::opforge_emu::fast::cos_approx(x)
#define __tanf(x) ::opforge_emu::fast::tanf_approx(x)
#define __sincosf(x, s, c) ::opforge_emu::fast::sincosf_approx(x, s, c)
#define __expf(x) ::opforge_emu::fast::expf_approx(x)
#define __exp10f(x) ::opforge_emu::fast::exp10f_approx(x)
#define __logf(x) ::opforge_emu::fast::logf_approx(x)
#define __log2f(x) ::opforge_emu::fast::lg2_approx(x)
#define __log10f(x) ::opforge_emu::fast::log10f_approx(x)
#define __powf(x, y) ::opforge_emu::fast::powf_approx(x, y)
static inline float __fdividef(float a, float b) { return ::opforge_emu::fast::div_approx(a, b); }
