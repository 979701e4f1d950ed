// opforge CUDA emulator: __half and __nv_bfloat16 (cuda_fp16.h / cuda_bf16.h names).
// Conversions round to nearest even with subnormals, infinities and NaN as the cvt.rn
// instructions do (NaN becomes the canonical 0x7fff); arithmetic is done in float and rounded
// once, which is exact for + - * / because float carries more than 2p+2 bits of either type.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace opforge_emu {
static inline uint32_t f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
static inline float u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline uint32_t round_shift(uint32_t v, int s) {
    uint32_t q = v >> s, r = v & ((1u << s) - 1), half = 1u << (s - 1);
    return q + (r > half || (r == half && (q & 1)));
}
static inline unsigned short float_to_half_bits(float f) {
    uint32_t x = f2u(f), sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x > 0x7f800000u) return 0x7fff;
    if (x >= 0x477ff000u) return sign | 0x7c00u;          // rounds to infinity
    if (x <= 0x33000000u) return sign;                     // at most half the smallest subnormal
    uint32_t exp = x >> 23;
    if (exp < 113) return sign | round_shift((x & 0x7fffffu) | 0x800000u, 126 - exp);
    return sign | round_shift(x - (112u << 23), 13);
}
static inline float half_bits_to_float(unsigned short h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
    if (exp == 0x1f) return u2f(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) return u2f(sign | f2u((float)mant * 5.9604644775390625e-08f));  // mant * 2^-24
    return u2f(sign | ((exp + 112) << 23) | (mant << 13));
}
static inline unsigned short float_to_bf16_bits(float f) {
    uint32_t x = f2u(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
    return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
static inline float bf16_bits_to_float(unsigned short b) { return u2f((uint32_t)b << 16); }
}  // namespace opforge_emu

#define OPFORGE_SMALL_FLOAT(T, TO_BITS, FROM_BITS)                                                 \
    struct T {                                                                                    \
        unsigned short __x;                                                                       \
        T() = default;                                                                            \
        T(float f) : __x(opforge_emu::TO_BITS(f)) {}                                              \
        T(double d) : __x(opforge_emu::TO_BITS((float)d)) {}                                      \
        T(int i) : __x(opforge_emu::TO_BITS((float)i)) {}                                         \
        T(unsigned i) : __x(opforge_emu::TO_BITS((float)i)) {}                                    \
        T(long long i) : __x(opforge_emu::TO_BITS((float)i)) {}                                   \
        operator float() const { return opforge_emu::FROM_BITS(__x); }                            \
        static T raw(unsigned short b) { T t; t.__x = b; return t; }                               \
        T& operator+=(const T& o) { return *this = T(float(*this) + float(o)); }                   \
        T& operator-=(const T& o) { return *this = T(float(*this) - float(o)); }                   \
        T& operator*=(const T& o) { return *this = T(float(*this) * float(o)); }                   \
        T& operator/=(const T& o) { return *this = T(float(*this) / float(o)); }                   \
    };                                                                                            \
    static inline T operator+(const T& a, const T& b) { return T(float(a) + float(b)); }          \
    static inline T operator-(const T& a, const T& b) { return T(float(a) - float(b)); }          \
    static inline T operator*(const T& a, const T& b) { return T(float(a) * float(b)); }          \
    static inline T operator/(const T& a, const T& b) { return T(float(a) / float(b)); }          \
    static inline T operator-(const T& a) { return T::raw(a.__x ^ 0x8000u); }                     \
    static inline bool operator==(const T& a, const T& b) { return float(a) == float(b); }        \
    static inline bool operator!=(const T& a, const T& b) { return float(a) != float(b); }        \
    static inline bool operator<(const T& a, const T& b) { return float(a) < float(b); }          \
    static inline bool operator<=(const T& a, const T& b) { return float(a) <= float(b); }        \
    static inline bool operator>(const T& a, const T& b) { return float(a) > float(b); }          \
    static inline bool operator>=(const T& a, const T& b) { return float(a) >= float(b); }

OPFORGE_SMALL_FLOAT(__half, float_to_half_bits, half_bits_to_float)
OPFORGE_SMALL_FLOAT(__nv_bfloat16, float_to_bf16_bits, bf16_bits_to_float)
typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;
struct __attribute__((aligned(4))) __half2 { __half x, y; };
struct __attribute__((aligned(4))) __nv_bfloat162 { __nv_bfloat16 x, y; };
typedef __half2 half2;
typedef __nv_bfloat162 nv_bfloat162;

#define OPFORGE_SMALL_OPS(T, T2, NAME)                                                             \
    static inline T __hadd(T a, T b) { return a + b; }                                            \
    static inline T __hsub(T a, T b) { return a - b; }                                            \
    static inline T __hmul(T a, T b) { return a * b; }                                            \
    static inline T __hdiv(T a, T b) { return a / b; }                                            \
    static inline T __hneg(T a) { return -a; }                                                    \
    static inline T __habs(T a) { return T::raw(a.__x & 0x7fffu); }                               \
    static inline T __hfma(T a, T b, T c) { return T((float)std::fma((double)float(a) * float(b), 1.0, float(c))); } \
    static inline bool __hisnan(T a) { return std::isnan(float(a)); }                             \
    static inline int __hisinf(T a) { float f = a; return std::isinf(f) ? (f < 0 ? -1 : 1) : 0; }  \
    static inline T __hmax(T a, T b) { return __hisnan(a) ? (__hisnan(b) ? T::raw(0x7fff) : b) : (__hisnan(b) || a > b) ? a : b; } \
    static inline T __hmin(T a, T b) { return __hisnan(a) ? (__hisnan(b) ? T::raw(0x7fff) : b) : (__hisnan(b) || a < b) ? a : b; } \
    static inline bool __heq(T a, T b) { return a == b; }                                         \
    static inline bool __hne(T a, T b) { return a != b; }                                         \
    static inline bool __hlt(T a, T b) { return a < b; }                                          \
    static inline bool __hle(T a, T b) { return a <= b; }                                         \
    static inline bool __hgt(T a, T b) { return a > b; }                                          \
    static inline bool __hge(T a, T b) { return a >= b; }                                        \
    static inline T hexp(T a) { return T(std::exp(float(a))); }                                   \
    static inline T hlog(T a) { return T(std::log(float(a))); }                                   \
    static inline T hsqrt(T a) { return T(std::sqrt(float(a))); }                                 \
    static inline T hrsqrt(T a) { return T(1.0f / std::sqrt(float(a))); }                         \
    static inline T2 __hadd2(T2 a, T2 b) { return T2{a.x + b.x, a.y + b.y}; }                      \
    static inline T2 __hsub2(T2 a, T2 b) { return T2{a.x - b.x, a.y - b.y}; }                      \
    static inline T2 __hmul2(T2 a, T2 b) { return T2{a.x * b.x, a.y * b.y}; }                      \
    static inline T2 __h2div(T2 a, T2 b) { return T2{a.x / b.x, a.y / b.y}; }                      \
    static inline T2 __hfma2(T2 a, T2 b, T2 c) { return T2{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)}; } \
    static inline T2 __hmax2(T2 a, T2 b) { return T2{__hmax(a.x, b.x), __hmax(a.y, b.y)}; }        \
    static inline T2 __hmin2(T2 a, T2 b) { return T2{__hmin(a.x, b.x), __hmin(a.y, b.y)}; }        \
    static inline T2 __habs2(T2 a) { return T2{__habs(a.x), __habs(a.y)}; }                       \
    static inline T2 operator+(T2 a, T2 b) { return __hadd2(a, b); }                              \
    static inline T2 operator-(T2 a, T2 b) { return __hsub2(a, b); }                              \
    static inline T2 operator*(T2 a, T2 b) { return __hmul2(a, b); }                              \
    static inline T2 operator/(T2 a, T2 b) { return __h2div(a, b); }                              \
    static inline T __low2##NAME(T2 a) { return a.x; }                                            \
    static inline T __high2##NAME(T2 a) { return a.y; }                                           \
    static inline T2 __halves2##NAME##2(T a, T b) { return T2{a, b}; }                            \
    static inline T2 __##NAME##2##NAME##2(T a) { return T2{a, a}; }                               \
    static inline T2 __lows2##NAME##2(T2 a, T2 b) { return T2{a.x, b.x}; }                        \
    static inline T2 __highs2##NAME##2(T2 a, T2 b) { return T2{a.y, b.y}; }                       \
    static inline float __low2float(T2 a) { return float(a.x); }                                  \
    static inline float __high2float(T2 a) { return float(a.y); }

OPFORGE_SMALL_OPS(__half, __half2, half)
OPFORGE_SMALL_OPS(__nv_bfloat16, __nv_bfloat162, bfloat16)

static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __double2half(double d) { return __half((float)d); }
static inline float __half2float(__half h) { return float(h); }
static inline __half __int2half_rn(int i) { return __half((float)i); }
static inline int __half2int_rn(__half h) { return (int)std::nearbyint(float(h)); }
static inline int __half2int_rz(__half h) { return (int)float(h); }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline __half __ushort_as_half(unsigned short b) { return __half::raw(b); }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __short_as_half(short b) { return __half::raw((unsigned short)b); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2{__half(a), __half(b)}; }
static inline __half2 __float2half2_rn(float a) { return __half2{__half(a), __half(a)}; }
static inline float2 __half22float2(__half2 h) { return float2{float(h.x), float(h.y)}; }
static inline __half2 __float22half2_rn(float2 f) { return __floats2half2_rn(f.x, f.y); }
static inline __half2 make_half2(__half a, __half b) { return __half2{a, b}; }

static inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16((float)d); }
static inline float __bfloat162float(__nv_bfloat16 b) { return float(b); }
static inline __nv_bfloat16 __int2bfloat16_rn(int i) { return __nv_bfloat16((float)i); }
static inline int __bfloat162int_rn(__nv_bfloat16 b) { return (int)std::nearbyint(float(b)); }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.__x; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short b) { return __nv_bfloat16::raw(b); }
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {__nv_bfloat16(a), __nv_bfloat16(b)}; }
static inline __nv_bfloat162 __float2bfloat162_rn(float a) { return {__nv_bfloat16(a), __nv_bfloat16(a)}; }
static inline float2 __bfloat1622float2(__nv_bfloat162 b) { return float2{float(b.x), float(b.y)}; }
static inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __floats2bfloat162_rn(f.x, f.y); }
static inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return {a, b}; }
