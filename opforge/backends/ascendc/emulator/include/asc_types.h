// opforge AscendC emulator: the NPU's 16-bit floating types. `half` is IEEE binary16 and `bfloat16_t` bfloat16,
// both converted from float with round-to-nearest-even (overflow to infinity, subnormals kept); arithmetic goes
// through float, as the scalar unit's does.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace opforge_asc {

inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline uint16_t float_to_half_bits(float f) {
    uint32_t x = float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t exp = (x >> 23) & 0xFF, man = x & 0x7FFFFF;
    if (exp == 0xFF) return (uint16_t)(sign | 0x7C00 | (man ? 0x200 | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7C00);
    if (e <= 0) {  // subnormal or zero: shift the full mantissa, round to nearest even
        if (e < -10) return (uint16_t)sign;
        uint32_t m = man | 0x800000;
        int shift = 14 - e;
        uint32_t half_m = m >> shift, rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half_m & 1))) half_m++;
        return (uint16_t)(sign | half_m);
    }
    uint32_t h = sign | (uint32_t)e << 10 | (man >> 13);
    uint32_t rem = man & 0x1FFF;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;  // a carry into the exponent is the right result
    return (uint16_t)h;
}

inline float half_bits_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
    if (exp == 0x1F) return bits_float(sign | 0x7F800000 | man << 13);
    if (exp == 0) {
        if (!man) return bits_float(sign);
        int e = -1;
        do { man <<= 1; e++; } while (!(man & 0x400));
        return bits_float(sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3FF) << 13);
    }
    return bits_float(sign | (exp + 127 - 15) << 23 | man << 13);
}

inline uint16_t float_to_bf16_bits(float f) {
    uint32_t x = float_bits(f);
    if ((x & 0x7FFFFFFF) > 0x7F800000) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7FFF + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

template <class Tag>
struct F16 {
    uint16_t bits;
    F16() = default;
    template <class A, class = std::enable_if_t<std::is_arithmetic_v<A>>>
    F16(A v) : bits(Tag::from((float)v)) {}
    operator float() const { return Tag::to(bits); }
    static F16 raw(uint16_t b) {
        F16 h;
        h.bits = b;
        return h;
    }
    template <class A> F16& operator+=(A v) { return *this = F16(float(*this) + float(v)); }
    template <class A> F16& operator-=(A v) { return *this = F16(float(*this) - float(v)); }
    template <class A> F16& operator*=(A v) { return *this = F16(float(*this) * float(v)); }
    template <class A> F16& operator/=(A v) { return *this = F16(float(*this) / float(v)); }
    F16 operator-() const { return raw(bits ^ 0x8000); }
};

struct HalfTag {
    static uint16_t from(float f) { return float_to_half_bits(f); }
    static float to(uint16_t b) { return half_bits_to_float(b); }
};
struct Bf16Tag {
    static uint16_t from(float f) { return float_to_bf16_bits(f); }
    static float to(uint16_t b) { return bits_float((uint32_t)b << 16); }
};
using half = F16<HalfTag>;
using bf16 = F16<Bf16Tag>;

// float for the 16-bit types, the type itself otherwise: what arithmetic on an element is done in.
template <class T> struct compute_type { using type = T; };
template <> struct compute_type<half> { using type = float; };
template <> struct compute_type<bf16> { using type = float; };
template <class T> using compute_t = typename compute_type<T>::type;

}  // namespace opforge_asc

using half = opforge_asc::half;
using bfloat16_t = opforge_asc::bf16;
