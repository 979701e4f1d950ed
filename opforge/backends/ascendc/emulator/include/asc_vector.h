// opforge's AscendC emulator: the vector-unit APIs (element-wise, scalar broadcast, Duplicate, Cast,
// reductions, Compare/Select). Written from Huawei's public Ascend C API reference (the documented
// signatures, parameter structs and semantics), not from Huawei headers.
//
// Every API calls opforge_asc::vec_issue(api, loc, reads, writes) with the bytes it touches BEFORE it
// computes (out of range, use after free, races between pipes are checked there), and takes a trailing
// `opforge_asc::Loc loc = opforge_asc::Loc::here()`, so a message names the candidate's file:line.
//
// Addressing of the mask/repeat ("level 0") forms, as documented: a repeat covers 256 bytes = 8 data
// blocks of 32 bytes; element j of repeat r of an operand lies at element offset
//   r * repStride * (32 / sizeof(T)) + (j / (32 / sizeof(T))) * blkStride * (32 / sizeof(T)) + j % (32 / sizeof(T))
// (strides in 32-byte blocks); the mask picks the elements j of a repeat that take part: the
// continuous form a count of leading elements (16-bit types 1..128, 32-bit 1..64), the bit form
// bits of mask[0] (elements 0..63) and mask[1] (64..127, 16-bit types only).
// A strided operand is declared to vec_issue as the one byte range from its first to its last element
// touched: exact for range and use-after-free checks; for races it may count the gaps between blocks.
//
// Arithmetic: half and bfloat16 inputs are computed in float and rounded once to the destination type;
// integer arithmetic wraps. Unsupported type/API combinations do not compile (static_assert), so the
// Python side reports them unsupported instead of running a guess; so do the forms not modelled here:
// isSetMask=false (a mask set by SetVectorMask / SetMaskCount), the mask/repeat forms of Cast, Compare
// and Select, Compare into the CMPMASK register, and every API this file does not define.
// Reductions: ReduceSum/Max/Min write the work area's first round (per-repeat results) and need the
// documented minimum of it; WholeReduce*/BlockReduce* write one result per repeat / per block.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <type_traits>
#include <vector>

namespace AscendC {

constexpr int32_t ONE_BLK_SIZE = 32;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_BLK_STRIDE = 1;
constexpr uint8_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint64_t MASK_PLACEHOLDER = 0;

struct BinaryRepeatParams {
    BinaryRepeatParams() {}
    BinaryRepeatParams(uint8_t dstBlkStrideIn, uint8_t src0BlkStrideIn, uint8_t src1BlkStrideIn,
                       uint8_t dstRepStrideIn, uint8_t src0RepStrideIn, uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct UnaryRepeatParams {
    UnaryRepeatParams() {}
    UnaryRepeatParams(uint16_t dstBlkStrideIn, uint16_t srcBlkStrideIn, uint8_t dstRepStrideIn, uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn) {}
    UnaryRepeatParams(uint16_t dstBlkStrideIn, uint16_t srcBlkStrideIn, uint8_t dstRepStrideIn, uint8_t srcRepStrideIn,
                      bool halfBlockIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn), halfBlock(halfBlockIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint16_t srcBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t srcRepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
    bool halfBlock = false;
};

enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class ReduceOrder { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

}  // namespace AscendC

namespace opforge_asc::vec {

using opforge_asc::E_ALIGN;
using opforge_asc::E_BADARG;

template <class T> inline constexpr bool is_half = std::is_same_v<T, AscendC::half>;
template <class T> inline constexpr bool is_bf16 = std::is_same_v<T, AscendC::bfloat16_t>;
template <class T> inline constexpr bool is_float = std::is_same_v<T, float>;
template <class T> inline constexpr bool is_fp = is_half<T> || is_bf16<T> || is_float<T>;
template <class T> inline constexpr bool is_i16 = std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t>;
template <class T> inline constexpr bool is_i32 = std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t>;
template <class T> inline constexpr bool is_int = std::is_integral_v<T>;
// type sets of the documented APIs (Atlas A2 / 910B)
template <class T> inline constexpr bool hf = is_half<T> || is_float<T>;                       // half/float
template <class T> inline constexpr bool hfi = hf<T> || std::is_same_v<T, int16_t> || std::is_same_v<T, int32_t>;

template <class T> constexpr uint32_t per_blk() { return 32u / sizeof(T); }
template <class T> constexpr uint32_t per_rep() { return 256u / sizeof(T); }

// the value an element holds, as the vector unit computes with it
template <class T> inline auto load(T v) {
    if constexpr (is_half<T> || is_bf16<T>) return float(v);
    else return v;
}
template <class T, class V> inline T store(V v) {
    if constexpr (is_half<T> || is_bf16<T>) return T(float(v));
    else return static_cast<T>(v);
}
// integer add/sub/mul wrap (two's complement) instead of the C++ undefined behaviour
template <class T> inline T wrap_add(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T> inline T wrap_sub(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class T> inline T wrap_mul(T a, T b) {
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

template <class T> inline void check_align(const char* api, Loc loc, const AscendC::LocalTensor<T>& t,
                                           const char* what, unsigned bytes = 32) {
    auto addr = reinterpret_cast<uintptr_t>(t.data_ptr());
    if (addr % bytes != 0)
        fail(E_ALIGN, api, loc, "%s starts %u bytes past a %u-byte boundary (the vector unit needs %u-byte aligned "
             "LocalTensor addresses)", what, unsigned(addr % bytes), bytes, bytes);
}

inline void check_count(const char* api, Loc loc, int64_t count) {
    if (count < 0) fail(E_BADARG, api, loc, "count %lld < 0", (long long)count);
}

template <class T> inline Span full(const AscendC::LocalTensor<T>& t, uint64_t n) { return t.span(0, n); }

// ---- mask / repeat (level 0) ------------------------------------------------------------------------
struct Mask {
    uint64_t bits[2] = {0, 0};
    bool on(uint32_t j) const { return j < 128 && ((bits[j >> 6] >> (j & 63)) & 1u); }
    int first() const {
        for (uint32_t j = 0; j < 128; ++j) if (on(j)) return int(j);
        return -1;
    }
    int last() const {
        for (int j = 127; j >= 0; --j) if (on(uint32_t(j))) return j;
        return -1;
    }
};

template <class T> inline Mask cont_mask(const char* api, Loc loc, uint64_t mask) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "the mask/repeat form of this API supports 16- and 32-bit types");
    if (mask > per_rep<T>())
        fail(E_BADARG, api, loc, "mask %llu > %u elements per repeat for a %u-byte type", (unsigned long long)mask,
             per_rep<T>(), unsigned(sizeof(T)));
    Mask m;
    for (uint64_t j = 0; j < mask; ++j) m.bits[j >> 6] |= uint64_t(1) << (j & 63);
    return m;
}
template <class T> inline Mask bit_mask(const char*, Loc, const uint64_t* mask) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "the mask/repeat form of this API supports 16- and 32-bit types");
    Mask m;
    m.bits[0] = mask[0];
    m.bits[1] = sizeof(T) == 2 ? mask[1] : 0;  // 32-bit types: 64 elements a repeat, mask[1] unused
    return m;
}

// element offset of element j of repeat r (strides in 32-byte blocks)
template <class T> inline uint64_t at(uint32_t r, uint32_t j, uint32_t blk, uint32_t rep) {
    constexpr uint32_t B = per_blk<T>();
    return uint64_t(r) * rep * B + uint64_t(j / B) * blk * B + j % B;
}
// the byte range an operand's mask/repeat access covers: from its first to its last element touched
template <class T> inline Span range(const AscendC::LocalTensor<T>& t, const Mask& m, uint32_t repeat, uint32_t blk,
                                     uint32_t rep) {
    int f = m.first(), l = m.last();
    if (repeat == 0 || f < 0) return t.span(0, 0);
    uint64_t lo = at<T>(0, uint32_t(f), blk, rep), hi = at<T>(repeat - 1, uint32_t(l), blk, rep);
    return t.span(lo, hi - lo + 1);
}

// ---- generic element-wise kernels ------------------------------------------------------------------
template <class D, class S0, class S1, class F>
inline void binary_count(const char* api, Loc loc, const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S0>& a,
                         const AscendC::LocalTensor<S1>& b, int64_t count, F f) {
    check_count(api, loc, count);
    check_align(api, loc, dst, "dst"); check_align(api, loc, a, "src0"); check_align(api, loc, b, "src1");
    uint64_t n = uint64_t(count);
    vec_issue(api, loc, {full(a, n), full(b, n)}, {full(dst, n)});
    D* d = dst.data_ptr(); const S0* x = a.data_ptr(); const S1* y = b.data_ptr();
    for (uint64_t i = 0; i < n; ++i) d[i] = f(x[i], y[i], d[i]);
}

template <class D, class S, class F>
inline void unary_count(const char* api, Loc loc, const AscendC::LocalTensor<D>& dst, const AscendC::LocalTensor<S>& a,
                        int64_t count, F f) {
    check_count(api, loc, count);
    check_align(api, loc, dst, "dst"); check_align(api, loc, a, "src");
    uint64_t n = uint64_t(count);
    vec_issue(api, loc, {full(a, n)}, {full(dst, n)});
    D* d = dst.data_ptr(); const S* x = a.data_ptr();
    for (uint64_t i = 0; i < n; ++i) d[i] = f(x[i], d[i]);
}

// the mask/repeat forms: a repeat's operands are all read before any of its results is written (an
// in-place call with overlapping strides sees the repeat's inputs, as the vector unit does)
template <class T, class F>
inline void binary_rep(const char* api, Loc loc, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a,
                       const AscendC::LocalTensor<T>& b, const Mask& m, uint32_t repeat,
                       const AscendC::BinaryRepeatParams& p, F f) {
    check_align(api, loc, dst, "dst"); check_align(api, loc, a, "src0"); check_align(api, loc, b, "src1");
    vec_issue(api, loc, {range(a, m, repeat, p.src0BlkStride, p.src0RepStride),
                         range(b, m, repeat, p.src1BlkStride, p.src1RepStride)},
              {range(dst, m, repeat, p.dstBlkStride, p.dstRepStride)});
    T* d = dst.data_ptr(); const T* x = a.data_ptr(); const T* y = b.data_ptr();
    T buf[128];
    for (uint32_t r = 0; r < repeat; ++r) {
        for (uint32_t j = 0; j < per_rep<T>(); ++j)
            if (m.on(j)) {
                uint64_t o = at<T>(r, j, p.dstBlkStride, p.dstRepStride);
                buf[j] = f(x[at<T>(r, j, p.src0BlkStride, p.src0RepStride)], y[at<T>(r, j, p.src1BlkStride, p.src1RepStride)], d[o]);
            }
        for (uint32_t j = 0; j < per_rep<T>(); ++j)
            if (m.on(j)) d[at<T>(r, j, p.dstBlkStride, p.dstRepStride)] = buf[j];
    }
}

template <class T, class F>
inline void unary_rep(const char* api, Loc loc, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a,
                      const Mask& m, uint32_t repeat, const AscendC::UnaryRepeatParams& p, F f) {
    check_align(api, loc, dst, "dst"); check_align(api, loc, a, "src");
    vec_issue(api, loc, {range(a, m, repeat, p.srcBlkStride, p.srcRepStride)},
              {range(dst, m, repeat, p.dstBlkStride, p.dstRepStride)});
    T* d = dst.data_ptr(); const T* x = a.data_ptr();
    T buf[128];
    for (uint32_t r = 0; r < repeat; ++r) {
        for (uint32_t j = 0; j < per_rep<T>(); ++j)
            if (m.on(j)) buf[j] = f(x[at<T>(r, j, p.srcBlkStride, p.srcRepStride)], d[at<T>(r, j, p.dstBlkStride, p.dstRepStride)]);
        for (uint32_t j = 0; j < per_rep<T>(); ++j)
            if (m.on(j)) d[at<T>(r, j, p.dstBlkStride, p.dstRepStride)] = buf[j];
    }
}

// ---- rounding (Cast) --------------------------------------------------------------------------------
// A float-like destination (half, bfloat16, float) has 2 neighbours around an inexact value x; the
// mode picks one: RINT (and NONE) the nearest, ties to even; FLOOR/CEIL/TRUNC directed; ROUND the
// nearest, ties away from zero; ODD the neighbour whose last mantissa bit is 1 (von Neumann).
template <class B> struct Bits;
template <> struct Bits<float> { using U = uint32_t; };
template <> struct Bits<AscendC::half> { using U = uint16_t; };
template <> struct Bits<AscendC::bfloat16_t> { using U = uint16_t; };

template <class F> inline typename Bits<F>::U bits_of(F v) {
    typename Bits<F>::U u; std::memcpy(&u, &v, sizeof u); return u;
}
template <class F> inline F from_bits(typename Bits<F>::U u) {
    F v; std::memcpy(&v, &u, sizeof u); return v;
}
// the next representable value above (dir=+1) or below (dir=-1)
template <class F> inline F next_toward(F v, int dir) {
    using U = typename Bits<F>::U;
    constexpr U sign = U(U(1) << (8 * sizeof(U) - 1));
    U u = bits_of(v);
    if ((u & U(~sign)) == 0) return from_bits<F>(dir > 0 ? U(1) : U(sign | 1));  // +-0: the smallest subnormal
    bool neg = (u & sign) != 0;
    return from_bits<F>((dir > 0) != neg ? U(u + 1) : U(u - 1));
}

template <class F> inline F round_to(double x, AscendC::RoundMode mode) {
    using AscendC::RoundMode;
    if (std::isnan(x)) return store<F>(std::numeric_limits<float>::quiet_NaN());
    // nearest, ties to even; x is a float or an integer of up to 32 bits here: one rounding to a float
    // destination, and for half/bfloat16 destinations x is a float or an int16 (exact in float)
    F r = store<F>(float(x));
    double rv = double(load(r));
    if (rv == x || std::isinf(x)) return r;
    if (std::isinf(rv) && mode == RoundMode::CAST_ROUND) return r;  // past the largest finite by half an ulp or
                                                                    // more: to infinity, as to nearest even
    F lo = rv < x ? r : next_toward(r, -1);
    F hi = rv < x ? next_toward(r, +1) : r;
    double dl = x - double(load(lo)), dh = double(load(hi)) - x;
    switch (mode) {
        case RoundMode::CAST_NONE:
        case RoundMode::CAST_RINT: return r;
        case RoundMode::CAST_FLOOR: return lo;
        case RoundMode::CAST_CEIL: return hi;
        case RoundMode::CAST_TRUNC: return x > 0 ? lo : hi;
        case RoundMode::CAST_ROUND: return dl < dh ? lo : dh < dl ? hi : (x > 0 ? hi : lo);
        case RoundMode::CAST_ODD: return (bits_of(lo) & 1u) ? lo : hi;
    }
    return r;
}

inline double round_int(double x, AscendC::RoundMode mode) {
    using AscendC::RoundMode;
    switch (mode) {
        case RoundMode::CAST_NONE:
        case RoundMode::CAST_RINT: return std::nearbyint(x);  // the default FE_TONEAREST: ties to even
        case RoundMode::CAST_FLOOR: return std::floor(x);
        case RoundMode::CAST_CEIL: return std::ceil(x);
        case RoundMode::CAST_ROUND: return std::round(x);    // ties away from zero
        case RoundMode::CAST_TRUNC: return std::trunc(x);
        case RoundMode::CAST_ODD: return x;
    }
    return x;
}

template <class I> inline I saturate(double x) {
    if (std::isnan(x)) return I(0);
    if (x <= double(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
    if (x >= double(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
    return I(x);
}

// the conversions Cast documents on Atlas A2 (others do not compile; int32 -> half is left out: its
// documented form may involve a dequantisation scale, which is not modelled)
template <class D, class S> inline constexpr bool cast_ok =
    (is_float<S> && (is_half<D> || is_bf16<D> || is_float<D> || std::is_same_v<D, int32_t> || std::is_same_v<D, int16_t> ||
                     std::is_same_v<D, int64_t>)) ||
    (is_half<S> && (is_float<D> || std::is_same_v<D, int32_t> || std::is_same_v<D, int16_t> || std::is_same_v<D, int8_t> ||
                    std::is_same_v<D, uint8_t>)) ||
    (is_bf16<S> && (is_float<D> || std::is_same_v<D, int32_t>)) ||
    (std::is_same_v<S, int32_t> && (is_float<D> || std::is_same_v<D, int16_t> || std::is_same_v<D, int64_t>)) ||
    (std::is_same_v<S, int16_t> && (is_float<D> || is_half<D>)) ||
    ((std::is_same_v<S, int8_t> || std::is_same_v<S, uint8_t>) && is_half<D>) ||
    (std::is_same_v<S, int64_t> && (is_float<D> || std::is_same_v<D, int32_t>));

template <class D, class S> inline D cast_one(S v, AscendC::RoundMode mode) {
    double x = double(load(v));
    if constexpr (is_fp<D> && !std::is_same_v<D, S>) {
        return round_to<D>(x, mode);
    } else if constexpr (std::is_same_v<D, S>) {  // float -> float: rounds to an integral value in the mode
        return mode == AscendC::RoundMode::CAST_NONE || std::isinf(x) || std::isnan(x) ? v : D(float(round_int(x, mode)));
    } else {
        return saturate<D>(round_int(x, mode));
    }
}

// ---- reductions ---------------------------------------------------------------------------------------
// Sums are pairwise (a binary tree: neighbours first, 0+1, 2+3, ..., then the partial sums the same
// way), each partial rounded to T, within each repeat of 256 bytes; the per-repeat results are then
// reduced again the same way, repeat by repeat, until one value is left: the documented shape of
// ReduceSum (per-repeat results in the work area, then reduced again) and BlockReduceSum (binary tree,
// half partial sums rounded to half). The exact pairing inside the hardware's tree is not documented.
template <class T> inline T tree_sum(T* v, uint32_t n) {
    if (n == 0) return store<T>(0.0f);
    while (n > 1) {
        uint32_t k = 0;
        for (uint32_t i = 0; i + 1 < n; i += 2) v[k++] = store<T>(load(v[i]) + load(v[i + 1]));
        if (n & 1) v[k++] = v[n - 1];
        n = k;
    }
    return v[0];
}

template <class T> inline bool better(bool is_max, T a, T b) {  // a strictly better than b
    return is_max ? load(a) > load(b) : load(a) < load(b);
}
template <class T> inline void put_index(T* slot, uint32_t index) {  // an index stored as T-sized integer bits
    if constexpr (sizeof(T) == 2) { uint16_t u = uint16_t(index); std::memcpy(slot, &u, 2); }
    else { uint32_t u = index; std::memcpy(slot, &u, 4); }
}

}  // namespace opforge_asc::vec

namespace AscendC {

#define OPFORGE_ASC_LOC opforge_asc::Loc loc = opforge_asc::Loc::here()
// a scalar argument takes the tensor's element type without deducing it (Muls(halfTensor, halfTensor, 2.0f, n))
template <class T> using opforge_same_t = std::type_identity_t<T>;

// ======================================= binary element-wise ==========================================
#define OPFORGE_ASC_BINARY(NAME, TYPES, EXPR)                                                                          \
    template <typename T>                                                                                              \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                \
                     const int32_t& count, OPFORGE_ASC_LOC) {                                                          \
        static_assert(TYPES, #NAME ": unsupported data type");                                                         \
        opforge_asc::vec::binary_count(#NAME, loc, dst, src0, src1, count, [](T a, T b, T d) -> T {                    \
            (void)d; using namespace opforge_asc::vec; return EXPR; });                                                \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                \
                     uint64_t mask, const uint8_t repeatTimes, const BinaryRepeatParams& repeatParams,                 \
                     OPFORGE_ASC_LOC) {                                                                                \
        static_assert(TYPES, #NAME ": unsupported data type");                                                         \
        static_assert(isSetMask, #NAME ": isSetMask=false (SetVectorMask) is not emulated");                           \
        auto m = opforge_asc::vec::cont_mask<T>(#NAME, loc, mask);                                                     \
        opforge_asc::vec::binary_rep(#NAME, loc, dst, src0, src1, m, repeatTimes, repeatParams,                        \
                                     [](T a, T b, T d) -> T { (void)d; using namespace opforge_asc::vec; return EXPR; }); \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                \
                     const uint64_t mask[], const uint8_t repeatTimes, const BinaryRepeatParams& repeatParams,         \
                     OPFORGE_ASC_LOC) {                                                                                \
        static_assert(TYPES, #NAME ": unsupported data type");                                                         \
        static_assert(isSetMask, #NAME ": isSetMask=false (SetVectorMask) is not emulated");                           \
        auto m = opforge_asc::vec::bit_mask<T>(#NAME, loc, mask);                                                      \
        opforge_asc::vec::binary_rep(#NAME, loc, dst, src0, src1, m, repeatTimes, repeatParams,                        \
                                     [](T a, T b, T d) -> T { (void)d; using namespace opforge_asc::vec; return EXPR; }); \
    }

OPFORGE_ASC_BINARY(Add, opforge_asc::vec::hfi<T>,
                   [&]() -> T { if constexpr (is_int<T>) return wrap_add(a, b); else return store<T>(load(a) + load(b)); }())
OPFORGE_ASC_BINARY(Sub, opforge_asc::vec::hfi<T>,
                   [&]() -> T { if constexpr (is_int<T>) return wrap_sub(a, b); else return store<T>(load(a) - load(b)); }())
OPFORGE_ASC_BINARY(Mul, opforge_asc::vec::hfi<T>,
                   [&]() -> T { if constexpr (is_int<T>) return wrap_mul(a, b); else return store<T>(load(a) * load(b)); }())
OPFORGE_ASC_BINARY(Div, opforge_asc::vec::hf<T>, store<T>(load(a) / load(b)))
OPFORGE_ASC_BINARY(Max, opforge_asc::vec::hfi<T>,
                   load(b) > load(a) ? b : a)
OPFORGE_ASC_BINARY(Min, opforge_asc::vec::hfi<T>,
                   load(b) < load(a) ? b : a)
OPFORGE_ASC_BINARY(And, opforge_asc::vec::is_i16<T>, T(a & b))
OPFORGE_ASC_BINARY(Or, opforge_asc::vec::is_i16<T>, T(a | b))
OPFORGE_ASC_BINARY(AddRelu, opforge_asc::vec::hfi<T>,
                   [&]() -> T { if constexpr (is_int<T>) { T s = wrap_add(a, b); return s > 0 ? s : T(0); }
                                else { float s = float(load(store<T>(load(a) + load(b)))); return store<T>(s > 0 ? s : 0.0f); } }())
OPFORGE_ASC_BINARY(SubRelu, opforge_asc::vec::hfi<T>,
                   [&]() -> T { if constexpr (is_int<T>) { T s = wrap_sub(a, b); return s > 0 ? s : T(0); }
                                else { float s = float(load(store<T>(load(a) - load(b)))); return store<T>(s > 0 ? s : 0.0f); } }())
// dst = src0 * src1 + dst
OPFORGE_ASC_BINARY(MulAddDst, opforge_asc::vec::hf<T>, store<T>(float(load(store<T>(load(a) * load(b)))) + load(d)))
// dst = src0 * dst + src1
OPFORGE_ASC_BINARY(FusedMulAdd, opforge_asc::vec::hf<T>, store<T>(float(load(store<T>(load(a) * load(d)))) + load(b)))

// ======================================= unary element-wise ===========================================
#define OPFORGE_ASC_UNARY(NAME, TYPES, EXPR)                                                                           \
    template <typename T>                                                                                              \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count, OPFORGE_ASC_LOC) {    \
        static_assert(TYPES, #NAME ": unsupported data type");                                                         \
        opforge_asc::vec::unary_count(#NAME, loc, dst, src, count,                                                     \
                                      [](T a, T) -> T { using namespace opforge_asc::vec; return EXPR; });             \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const uint8_t repeatTimes,   \
                     const UnaryRepeatParams& repeatParams, OPFORGE_ASC_LOC) {                                         \
        static_assert(TYPES, #NAME ": unsupported data type");                                                         \
        static_assert(isSetMask, #NAME ": isSetMask=false (SetVectorMask) is not emulated");                           \
        auto m = opforge_asc::vec::cont_mask<T>(#NAME, loc, mask);                                                     \
        opforge_asc::vec::unary_rep(#NAME, loc, dst, src, m, repeatTimes, repeatParams,                                \
                                    [](T a, T) -> T { using namespace opforge_asc::vec; return EXPR; });               \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                      \
                     const uint8_t repeatTimes, const UnaryRepeatParams& repeatParams, OPFORGE_ASC_LOC) {              \
        static_assert(TYPES, #NAME ": unsupported data type");                                                         \
        static_assert(isSetMask, #NAME ": isSetMask=false (SetVectorMask) is not emulated");                           \
        auto m = opforge_asc::vec::bit_mask<T>(#NAME, loc, mask);                                                      \
        opforge_asc::vec::unary_rep(#NAME, loc, dst, src, m, repeatTimes, repeatParams,                                \
                                    [](T a, T) -> T { using namespace opforge_asc::vec; return EXPR; });               \
    }

OPFORGE_ASC_UNARY(Exp, opforge_asc::vec::hf<T>, store<T>(std::exp(load(a))))
OPFORGE_ASC_UNARY(Ln, opforge_asc::vec::hf<T>, store<T>(std::log(load(a))))
OPFORGE_ASC_UNARY(Abs, opforge_asc::vec::hf<T>, store<T>(std::fabs(load(a))))
OPFORGE_ASC_UNARY(Sqrt, opforge_asc::vec::hf<T>, store<T>(std::sqrt(load(a))))
OPFORGE_ASC_UNARY(Rsqrt, opforge_asc::vec::hf<T>, store<T>(1.0f / std::sqrt(load(a))))
OPFORGE_ASC_UNARY(Reciprocal, opforge_asc::vec::hf<T>, store<T>(1.0f / load(a)))
OPFORGE_ASC_UNARY(Relu, opforge_asc::vec::hf<T> || (std::is_same_v<T, int32_t>),
                  [&]() -> T { if constexpr (is_int<T>) return a > 0 ? a : T(0);
                               else return load(a) > 0 ? a : store<T>(0.0f); }())
OPFORGE_ASC_UNARY(Not, opforge_asc::vec::is_i16<T>, T(~a))

// ================================ math library (high-level API) ======================================
// Sigmoid, Tanh, Sin, Cos, Erf, Floor, Ceil: element-wise in float, rounded once to T; the four documented
// forms (with or without sharedTmpBuffer, with calCount or the whole source tensor). The library's own
// approximations are not documented: these are the exact functions rounded once (within any tolerance
// the real ones meet). The temporary buffer's use is not modelled.
#define OPFORGE_ASC_MATH(NAME, EXPR)                                                                                   \
    template <typename T, bool isReuseSource = false>                                                                  \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                 \
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, OPFORGE_ASC_LOC) {          \
        static_assert(opforge_asc::vec::hf<T>, #NAME ": unsupported data type (half/float)");                          \
        (void)sharedTmpBuffer;                                                                                         \
        opforge_asc::vec::unary_count(#NAME, loc, dstTensor, srcTensor, int64_t(calCount),                             \
                                      [](T a, T) -> T { using namespace opforge_asc::vec; float x = load(a);           \
                                                        return store<T>(EXPR); });                                     \
    }                                                                                                                  \
    template <typename T, bool isReuseSource = false>                                                                  \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,        \
                     OPFORGE_ASC_LOC) {                                                                                \
        NAME<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), calCount, loc);                           \
    }                                                                                                                  \
    template <typename T, bool isReuseSource = false>                                                                  \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                 \
                     const LocalTensor<uint8_t>& sharedTmpBuffer, OPFORGE_ASC_LOC) {                                   \
        NAME<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize(), loc);                       \
    }                                                                                                                  \
    template <typename T, bool isReuseSource = false>                                                                  \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, OPFORGE_ASC_LOC) {              \
        NAME<T, isReuseSource>(dstTensor, srcTensor, LocalTensor<uint8_t>(), srcTensor.GetSize(), loc);                \
    }

OPFORGE_ASC_MATH(Sigmoid, 1.0f / (1.0f + std::exp(-x)))
OPFORGE_ASC_MATH(Tanh, std::tanh(x))
OPFORGE_ASC_MATH(Sin, std::sin(x))
OPFORGE_ASC_MATH(Cos, std::cos(x))
OPFORGE_ASC_MATH(Erf, std::erf(x))
OPFORGE_ASC_MATH(Floor, std::floor(x))
OPFORGE_ASC_MATH(Ceil, std::ceil(x))

// ============================== tensor-scalar (scalar broadcast) =====================================
#define OPFORGE_ASC_SCALAR(NAME, TYPES, EXPR)                                                                          \
    template <typename T>                                                                                              \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const opforge_same_t<T>& scalarValue,       \
                     const int32_t& count, OPFORGE_ASC_LOC) {                                                          \
        static_assert(TYPES, #NAME ": unsupported data type");                                                         \
        const T s = scalarValue;                                                                                       \
        opforge_asc::vec::unary_count(#NAME, loc, dst, src, count,                                                     \
                                      [s](T a, T) -> T { using namespace opforge_asc::vec; return EXPR; });            \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const opforge_same_t<T>& scalarValue,       \
                     uint64_t mask, const uint8_t repeatTimes, const UnaryRepeatParams& repeatParams,                  \
                     OPFORGE_ASC_LOC) {                                                                                \
        static_assert(TYPES, #NAME ": unsupported data type");                                                         \
        static_assert(isSetMask, #NAME ": isSetMask=false (SetVectorMask) is not emulated");                           \
        const T s = scalarValue;                                                                                       \
        auto m = opforge_asc::vec::cont_mask<T>(#NAME, loc, mask);                                                     \
        opforge_asc::vec::unary_rep(#NAME, loc, dst, src, m, repeatTimes, repeatParams,                                \
                                    [s](T a, T) -> T { using namespace opforge_asc::vec; return EXPR; });              \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const opforge_same_t<T>& scalarValue,       \
                     const uint64_t mask[], const uint8_t repeatTimes, const UnaryRepeatParams& repeatParams,          \
                     OPFORGE_ASC_LOC) {                                                                                \
        static_assert(TYPES, #NAME ": unsupported data type");                                                         \
        static_assert(isSetMask, #NAME ": isSetMask=false (SetVectorMask) is not emulated");                           \
        const T s = scalarValue;                                                                                       \
        auto m = opforge_asc::vec::bit_mask<T>(#NAME, loc, mask);                                                      \
        opforge_asc::vec::unary_rep(#NAME, loc, dst, src, m, repeatTimes, repeatParams,                                \
                                    [s](T a, T) -> T { using namespace opforge_asc::vec; return EXPR; });              \
    }

OPFORGE_ASC_SCALAR(Adds, opforge_asc::vec::hfi<T>,
                   [&]() -> T { if constexpr (is_int<T>) return wrap_add(a, s); else return store<T>(load(a) + load(s)); }())
OPFORGE_ASC_SCALAR(Muls, opforge_asc::vec::hfi<T>,
                   [&]() -> T { if constexpr (is_int<T>) return wrap_mul(a, s); else return store<T>(load(a) * load(s)); }())
OPFORGE_ASC_SCALAR(Maxs, opforge_asc::vec::hfi<T>, load(s) > load(a) ? s : a)
OPFORGE_ASC_SCALAR(Mins, opforge_asc::vec::hfi<T>, load(s) < load(a) ? s : a)
OPFORGE_ASC_SCALAR(LeakyRelu, opforge_asc::vec::hf<T>,
                   load(a) >= 0 ? a : store<T>(float(load(a)) * float(load(s))))

// dst = dst + src * scalar (Axpy; the destination may be float where the source is half)
template <typename T, typename U>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const opforge_same_t<U>& scalarValue,
                 const int32_t& count, OPFORGE_ASC_LOC) {
    static_assert((std::is_same_v<T, U> && opforge_asc::vec::hf<T>) ||
                  (std::is_same_v<T, float> && std::is_same_v<U, half>), "Axpy: unsupported data types");
    const U s = scalarValue;
    opforge_asc::vec::unary_count("Axpy", loc, dst, src, count, [s](U a, T d) -> T {
        using namespace opforge_asc::vec;
        return store<T>(float(load(d)) + float(load(store<U>(float(load(a)) * float(load(s))))));
    });
}

// ============================================ Duplicate ===============================================
template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const opforge_same_t<T>& scalarValue, const int32_t& count, OPFORGE_ASC_LOC) {
    static_assert(opforge_asc::vec::hfi<T> || std::is_same_v<T, uint16_t> || std::is_same_v<T, uint32_t> ||
                  opforge_asc::vec::is_bf16<T>, "Duplicate: unsupported data type");
    opforge_asc::vec::check_count("Duplicate", loc, count);
    opforge_asc::vec::check_align("Duplicate", loc, dst, "dst");
    opforge_asc::vec_issue("Duplicate", loc, {}, {opforge_asc::vec::full(dst, uint64_t(count))});
    T* d = dst.data_ptr();
    const T s = scalarValue;
    for (int32_t i = 0; i < count; ++i) d[i] = s;
}
namespace opforge_asc_detail {
template <typename T>
inline void duplicate_rep(const LocalTensor<T>& dst, T s, const opforge_asc::vec::Mask& m, uint8_t repeatTimes,
                          uint16_t dstBlockStride, uint8_t dstRepeatStride, opforge_asc::Loc loc) {
    using namespace opforge_asc::vec;
    check_align("Duplicate", loc, dst, "dst");
    opforge_asc::vec_issue("Duplicate", loc, {}, {range(dst, m, repeatTimes, dstBlockStride, dstRepeatStride)});
    T* d = dst.data_ptr();
    for (uint32_t r = 0; r < repeatTimes; ++r)
        for (uint32_t j = 0; j < per_rep<T>(); ++j)
            if (m.on(j)) d[at<T>(r, j, dstBlockStride, dstRepeatStride)] = s;
}
}  // namespace opforge_asc_detail
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const opforge_same_t<T>& scalarValue, uint64_t mask, const uint8_t repeatTimes,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride, OPFORGE_ASC_LOC) {
    static_assert(isSetMask, "Duplicate: isSetMask=false (SetVectorMask) is not emulated");
    opforge_asc_detail::duplicate_rep(dst, T(scalarValue), opforge_asc::vec::cont_mask<T>("Duplicate", loc, mask),
                                      repeatTimes, dstBlockStride, dstRepeatStride, loc);
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const opforge_same_t<T>& scalarValue, const uint64_t mask[],
                      const uint8_t repeatTimes, const uint16_t dstBlockStride, const uint8_t dstRepeatStride,
                      OPFORGE_ASC_LOC) {
    static_assert(isSetMask, "Duplicate: isSetMask=false (SetVectorMask) is not emulated");
    opforge_asc_detail::duplicate_rep(dst, T(scalarValue), opforge_asc::vec::bit_mask<T>("Duplicate", loc, mask),
                                      repeatTimes, dstBlockStride, dstRepeatStride, loc);
}

// ============================================== Brcb ==================================================
// Each repeat takes 8 consecutive source elements and fills one 32-byte destination block with each;
// BrcbRepeatParams: the destination's block stride and repeat stride, in 32-byte blocks.
struct BrcbRepeatParams {
    BrcbRepeatParams() {}
    BrcbRepeatParams(uint16_t dstBlkStrideIn, uint16_t dstRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};
template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t repeatTimes,
                 const BrcbRepeatParams& repeatParams, OPFORGE_ASC_LOC) {
    using namespace opforge_asc::vec;
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Brcb: unsupported data type (16- or 32-bit)");
    check_align("Brcb", loc, dst, "dst");
    check_align("Brcb", loc, src0, "src0");
    constexpr uint32_t B = per_blk<T>();
    const uint64_t blk = repeatParams.dstBlkStride, rep = repeatParams.dstRepStride;
    uint64_t dst_elems = repeatTimes ? ((repeatTimes - 1) * rep + 7 * blk) * B + B : 0;
    opforge_asc::vec_issue("Brcb", loc, {src0.span(0, uint64_t(repeatTimes) * 8)}, {dst.span(0, dst_elems)});
    T* d = dst.data_ptr();
    const T* s = src0.data_ptr();
    for (uint32_t r = 0; r < repeatTimes; ++r)
        for (uint32_t b = 0; b < 8; ++b) {
            const T v = s[r * 8 + b];
            T* out = d + (r * rep + b * blk) * B;
            for (uint32_t k = 0; k < B; ++k) out[k] = v;
        }
}

// =============================================== Cast =================================================
// RoundMode per the documentation: CAST_NONE rounds to nearest even where the conversion loses
// precision and is exact otherwise; CAST_ODD applies to float-like destinations only. Integer
// destinations saturate; NaN becomes 0. float -> float rounds to an integral value in the mode.
template <typename T, typename U>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& round_mode,
                 const uint32_t count, OPFORGE_ASC_LOC) {
    static_assert(opforge_asc::vec::cast_ok<T, U>, "Cast: this conversion is not documented");
    if (round_mode == RoundMode::CAST_ODD && !opforge_asc::vec::is_fp<T>)
        opforge_asc::fail(opforge_asc::E_BADARG, "Cast", loc, "CAST_ODD needs a floating-point destination");
    if (round_mode == RoundMode::CAST_ODD && std::is_same_v<T, U>)
        opforge_asc::fail(opforge_asc::E_BADARG, "Cast", loc, "CAST_ODD is not a float -> float mode");
    const RoundMode mode = round_mode;
    opforge_asc::vec::unary_count("Cast", loc, dst, src, int64_t(count),
                                  [mode](U a, T) -> T { return opforge_asc::vec::cast_one<T, U>(a, mode); });
}

// ============================================ reductions ==============================================
namespace opforge_asc_detail {
using opforge_asc::Loc;
// the documented minimal work area (elements): the first round's results (sum: one per repeat;
// max/min: a value and an index per repeat) rounded up to whole 32-byte blocks
template <typename T> inline uint64_t work_elems(uint64_t repeats, bool pairs) {
    constexpr uint64_t B = opforge_asc::vec::per_blk<T>();
    uint64_t n = repeats * (pairs ? 2 : 1);
    return (n + B - 1) / B * B;
}

// the per-repeat results (firsts; for max/min with their indices) go to the work area (sum: one
// per repeat; max/min: value, index pairs), then are reduced again, per_rep of them at a time, until
// one is left: dst[0] = the result; dst[1] = its index (as T-sized integer bits) when calIndex
template <typename T>
inline void finish_reduce(int kind, const LocalTensor<T>& dst, const LocalTensor<T>& work, std::vector<T> cur,
                          std::vector<uint32_t> cur_idx, bool calIndex) {
    using namespace opforge_asc::vec;
    T* w = work.data_ptr();
    for (size_t i = 0; i < cur.size(); ++i) {
        if (kind == 0) w[i] = cur[i];
        else { w[2 * i] = cur[i]; put_index(&w[2 * i + 1], cur_idx[i]); }
    }
    while (cur.size() > 1) {
        std::vector<T> next;
        std::vector<uint32_t> next_idx;
        for (size_t b = 0; b < cur.size(); b += per_rep<T>()) {
            size_t e = std::min(cur.size(), b + per_rep<T>());
            if (kind == 0) { next.push_back(tree_sum(cur.data() + b, uint32_t(e - b))); next_idx.push_back(0); }
            else {
                size_t best = b;
                for (size_t i = b + 1; i < e; ++i) if (better(kind == 1, cur[i], cur[best])) best = i;
                next.push_back(cur[best]); next_idx.push_back(cur_idx[best]);
            }
        }
        cur.swap(next); cur_idx.swap(next_idx);
    }
    T* d = dst.data_ptr();
    d[0] = cur.empty() ? store<T>(0.0f) : cur[0];
    if (kind != 0 && calIndex) put_index(&d[1], cur_idx.empty() ? 0u : cur_idx[0]);
}

// one group's result (tree sum, or the first best element and its index)
template <typename T>
inline void reduce_group(int kind, std::vector<T>& g, std::vector<uint32_t>& gi, std::vector<T>& out,
                         std::vector<uint32_t>& out_idx) {
    using namespace opforge_asc::vec;
    if (g.empty()) return;
    if (kind == 0) { out.push_back(tree_sum(g.data(), uint32_t(g.size()))); out_idx.push_back(0); return; }
    size_t best = 0;
    for (size_t i = 1; i < g.size(); ++i) if (better(kind == 1, g[i], g[best])) best = i;
    out.push_back(g[best]); out_idx.push_back(gi[best]);
}

template <typename T>
inline void reduce_count(const char* api, int kind, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                         const LocalTensor<T>& work, int32_t count, bool calIndex, Loc loc) {
    using namespace opforge_asc::vec;
    static_assert(hf<T>, "Reduce*: unsupported data type (half/float)");
    check_count(api, loc, count);
    check_align(api, loc, src, "src");
    check_align(api, loc, work, "workLocal");
    check_align(api, loc, dst, "dst", unsigned(kind == 0 ? sizeof(T) : 2 * sizeof(T)));
    uint64_t n = uint64_t(count);
    uint64_t repeats = (n + per_rep<T>() - 1) / per_rep<T>();
    uint64_t wn = work_elems<T>(std::max<uint64_t>(repeats, 1), kind != 0);
    uint64_t dn = (kind != 0 && calIndex) ? 2 : 1;
    opforge_asc::vec_issue(api, loc, {src.span(0, n)}, {work.span(0, wn), dst.span(0, dn)});
    const T* s = src.data_ptr();
    std::vector<T> firsts;
    std::vector<uint32_t> first_idx;
    for (uint64_t b = 0; b < n; b += per_rep<T>()) {
        uint64_t e = std::min<uint64_t>(n, b + per_rep<T>());
        std::vector<T> g(s + b, s + e);
        std::vector<uint32_t> gi;
        for (uint64_t i = b; i < e; ++i) gi.push_back(uint32_t(i));
        reduce_group(kind, g, gi, firsts, first_idx);
    }
    finish_reduce(kind, dst, work, std::move(firsts), std::move(first_idx), calIndex);
}

// the mask/repeat form: a repeat's active elements form one group; the index of element j of repeat
// r is r * per_rep + j (the position in the data the repeats cover with srcRepStride 8)
template <typename T>
inline void reduce_rep(const char* api, int kind, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                       const LocalTensor<T>& work, const opforge_asc::vec::Mask& m, int32_t repeatTimes,
                       int32_t srcRepStride, bool calIndex, Loc loc) {
    using namespace opforge_asc::vec;
    static_assert(hf<T>, "Reduce*: unsupported data type (half/float)");
    if (repeatTimes < 0 || srcRepStride < 0)
        opforge_asc::fail(E_BADARG, api, loc, "repeatTimes %d / srcRepStride %d < 0", repeatTimes, srcRepStride);
    check_align(api, loc, src, "src");
    check_align(api, loc, work, "workLocal");
    check_align(api, loc, dst, "dst", unsigned(kind == 0 ? sizeof(T) : 2 * sizeof(T)));
    uint64_t wn = work_elems<T>(std::max<int32_t>(repeatTimes, 1), kind != 0);
    uint64_t dn = (kind != 0 && calIndex) ? 2 : 1;
    opforge_asc::vec_issue(api, loc, {range(src, m, uint32_t(repeatTimes), 1, uint32_t(srcRepStride))},
                           {work.span(0, wn), dst.span(0, dn)});
    const T* s = src.data_ptr();
    std::vector<T> firsts;
    std::vector<uint32_t> first_idx;
    for (int32_t r = 0; r < repeatTimes; ++r) {
        std::vector<T> g;
        std::vector<uint32_t> gi;
        for (uint32_t j = 0; j < per_rep<T>(); ++j)
            if (m.on(j)) { g.push_back(s[at<T>(uint32_t(r), j, 1, uint32_t(srcRepStride))]); gi.push_back(uint32_t(r) * per_rep<T>() + j); }
        reduce_group(kind, g, gi, firsts, first_idx);
    }
    finish_reduce(kind, dst, work, std::move(firsts), std::move(first_idx), calIndex);
}
}  // namespace opforge_asc_detail

#define OPFORGE_ASC_REDUCE(NAME, KIND, IDXDECL, IDXARG)                                                                \
    template <typename T>                                                                                              \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal,            \
                     const int32_t count IDXDECL, OPFORGE_ASC_LOC) {                                                   \
        opforge_asc_detail::reduce_count(#NAME, KIND, dst, src, workLocal, count, IDXARG, loc);                        \
    }                                                                                                                  \
    template <typename T>                                                                                              \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal,            \
                     const int32_t mask, const int32_t repeatTimes, const int32_t srcRepStride IDXDECL,                \
                     OPFORGE_ASC_LOC) {                                                                                \
        if (mask < 0) opforge_asc::fail(opforge_asc::E_BADARG, #NAME, loc, "mask %d < 0", mask);                       \
        opforge_asc_detail::reduce_rep(#NAME, KIND, dst, src, workLocal,                                               \
                                       opforge_asc::vec::cont_mask<T>(#NAME, loc, uint64_t(mask)), repeatTimes,        \
                                       srcRepStride, IDXARG, loc);                                                     \
    }                                                                                                                  \
    template <typename T>                                                                                              \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& workLocal,            \
                     const uint64_t mask[], const int32_t repeatTimes, const int32_t srcRepStride IDXDECL,             \
                     OPFORGE_ASC_LOC) {                                                                                \
        opforge_asc_detail::reduce_rep(#NAME, KIND, dst, src, workLocal,                                               \
                                       opforge_asc::vec::bit_mask<T>(#NAME, loc, mask), repeatTimes, srcRepStride,     \
                                       IDXARG, loc);                                                                   \
    }

#define OPFORGE_ASC_COMMA ,
OPFORGE_ASC_REDUCE(ReduceSum, 0, , false)
OPFORGE_ASC_REDUCE(ReduceMax, 1, OPFORGE_ASC_COMMA bool calIndex = 0, calIndex)
OPFORGE_ASC_REDUCE(ReduceMin, 2, OPFORGE_ASC_COMMA bool calIndex = 0, calIndex)

// ---- WholeReduce*: one result per repeat ----
namespace opforge_asc_detail {
template <typename T>
inline void whole_reduce(const char* api, int kind, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                         const opforge_asc::vec::Mask& m, int32_t repeatTimes, int32_t dstRepStride,
                         int32_t srcBlkStride, int32_t srcRepStride, ReduceOrder order, Loc loc) {
    using namespace opforge_asc::vec;
    static_assert(hf<T>, "WholeReduce*: unsupported data type (half/float)");
    if (repeatTimes < 0 || dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0)
        opforge_asc::fail(E_BADARG, api, loc, "negative repeatTimes/stride (%d, %d, %d, %d)", repeatTimes,
                          dstRepStride, srcBlkStride, srcRepStride);
    check_align(api, loc, src, "src");
    // dstRepStride unit: sum and value-only: one T; value and index: two T; index only: 4 bytes
    const bool only_index = kind != 0 && order == ReduceOrder::ORDER_ONLY_INDEX;
    const bool only_value = kind == 0 || order == ReduceOrder::ORDER_ONLY_VALUE;
    const uint64_t unit_bytes = only_index ? 4 : only_value ? sizeof(T) : 2 * sizeof(T);
    uint64_t dst_bytes = repeatTimes > 0 ? uint64_t(repeatTimes - 1) * uint64_t(dstRepStride) * unit_bytes + unit_bytes : 0;
    uint64_t dst_elems = (dst_bytes + sizeof(T) - 1) / sizeof(T);
    opforge_asc::vec_issue(api, loc, {range(src, m, uint32_t(repeatTimes), uint32_t(srcBlkStride), uint32_t(srcRepStride))},
                           {dst.span(0, dst_elems)});
    const T* s = src.data_ptr();
    unsigned char* d = reinterpret_cast<unsigned char*>(dst.data_ptr());
    for (int32_t r = 0; r < repeatTimes; ++r) {
        T g[128];
        uint32_t gi[128];
        uint32_t n = 0;
        for (uint32_t j = 0; j < per_rep<T>(); ++j)
            if (m.on(j)) { g[n] = s[at<T>(uint32_t(r), j, uint32_t(srcBlkStride), uint32_t(srcRepStride))]; gi[n++] = j; }
        if (n == 0) continue;
        unsigned char* out = d + uint64_t(r) * uint64_t(dstRepStride) * unit_bytes;
        if (kind == 0) { T v = tree_sum(g, n); std::memcpy(out, &v, sizeof(T)); continue; }
        uint32_t best = 0;
        for (uint32_t i = 1; i < n; ++i) if (better(kind == 1, g[i], g[best])) best = i;
        T v = g[best];
        T ix;
        put_index(&ix, gi[best]);
        switch (order) {
            case ReduceOrder::ORDER_VALUE_INDEX: std::memcpy(out, &v, sizeof(T)); std::memcpy(out + sizeof(T), &ix, sizeof(T)); break;
            case ReduceOrder::ORDER_INDEX_VALUE: std::memcpy(out, &ix, sizeof(T)); std::memcpy(out + sizeof(T), &v, sizeof(T)); break;
            case ReduceOrder::ORDER_ONLY_VALUE: std::memcpy(out, &v, sizeof(T)); break;
            case ReduceOrder::ORDER_ONLY_INDEX: { uint32_t u = gi[best]; std::memcpy(out, &u, 4); break; }
        }
    }
}
}  // namespace opforge_asc_detail

template <typename T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                           const int32_t repeatTimes, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride, OPFORGE_ASC_LOC) {
    static_assert(isSetMask, "WholeReduceSum: isSetMask=false (SetVectorMask) is not emulated");
    if (mask < 0) opforge_asc::fail(opforge_asc::E_BADARG, "WholeReduceSum", loc, "mask %d < 0", mask);
    opforge_asc_detail::whole_reduce("WholeReduceSum", 0, dst, src, opforge_asc::vec::cont_mask<T>("WholeReduceSum", loc, uint64_t(mask)),
                                     repeatTimes, dstRepStride, srcBlkStride, srcRepStride, ReduceOrder::ORDER_ONLY_VALUE, loc);
}
template <typename T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],
                           const int32_t repeatTimes, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride, OPFORGE_ASC_LOC) {
    static_assert(isSetMask, "WholeReduceSum: isSetMask=false (SetVectorMask) is not emulated");
    opforge_asc_detail::whole_reduce("WholeReduceSum", 0, dst, src, opforge_asc::vec::bit_mask<T>("WholeReduceSum", loc, mask),
                                     repeatTimes, dstRepStride, srcBlkStride, srcRepStride, ReduceOrder::ORDER_ONLY_VALUE, loc);
}
#define OPFORGE_ASC_WHOLE_MINMAX(NAME, KIND)                                                                           \
    template <typename T, bool isSetMask = true>                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,                         \
                     const int32_t repeatTimes, const int32_t dstRepStride, const int32_t srcBlkStride,                \
                     const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX,                   \
                     OPFORGE_ASC_LOC) {                                                                                \
        static_assert(isSetMask, #NAME ": isSetMask=false (SetVectorMask) is not emulated");                           \
        if (mask < 0) opforge_asc::fail(opforge_asc::E_BADARG, #NAME, loc, "mask %d < 0", mask);                       \
        opforge_asc_detail::whole_reduce(#NAME, KIND, dst, src, opforge_asc::vec::cont_mask<T>(#NAME, loc, uint64_t(mask)), \
                                         repeatTimes, dstRepStride, srcBlkStride, srcRepStride, order, loc);           \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                      \
                     const int32_t repeatTimes, const int32_t dstRepStride, const int32_t srcBlkStride,                \
                     const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX,                   \
                     OPFORGE_ASC_LOC) {                                                                                \
        static_assert(isSetMask, #NAME ": isSetMask=false (SetVectorMask) is not emulated");                           \
        opforge_asc_detail::whole_reduce(#NAME, KIND, dst, src, opforge_asc::vec::bit_mask<T>(#NAME, loc, mask),       \
                                         repeatTimes, dstRepStride, srcBlkStride, srcRepStride, order, loc);           \
    }
OPFORGE_ASC_WHOLE_MINMAX(WholeReduceMax, 1)
OPFORGE_ASC_WHOLE_MINMAX(WholeReduceMin, 2)

// ---- BlockReduce*: one result per 32-byte block, 8 a repeat, written contiguously; dstRepStride in
// units of one repeat's 8 results ----
namespace opforge_asc_detail {
template <typename T>
inline void block_reduce(const char* api, int kind, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                         int32_t repeat, const opforge_asc::vec::Mask& m, int32_t dstRepStride, int32_t srcBlkStride,
                         int32_t srcRepStride, Loc loc) {
    using namespace opforge_asc::vec;
    static_assert(hf<T>, "BlockReduce*: unsupported data type (half/float)");
    if (repeat < 0 || dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0)
        opforge_asc::fail(E_BADARG, api, loc, "negative repeat/stride (%d, %d, %d, %d)", repeat, dstRepStride,
                          srcBlkStride, srcRepStride);
    check_align(api, loc, src, "src");
    uint64_t dst_elems = repeat > 0 ? uint64_t(repeat - 1) * uint64_t(dstRepStride) * 8 + 8 : 0;
    opforge_asc::vec_issue(api, loc, {range(src, m, uint32_t(repeat), uint32_t(srcBlkStride), uint32_t(srcRepStride))},
                           {dst.span(0, dst_elems)});
    const T* s = src.data_ptr();
    T* d = dst.data_ptr();
    constexpr uint32_t B = per_blk<T>();
    for (int32_t r = 0; r < repeat; ++r) {
        T out[8];
        bool any[8] = {};
        for (uint32_t b = 0; b < 8; ++b) {
            T g[16];
            uint32_t n = 0;
            for (uint32_t k = 0; k < B; ++k)
                if (m.on(b * B + k)) g[n++] = s[at<T>(uint32_t(r), b * B + k, uint32_t(srcBlkStride), uint32_t(srcRepStride))];
            if (n == 0) continue;
            any[b] = true;
            if (kind == 0) out[b] = tree_sum(g, n);
            else { uint32_t best = 0; for (uint32_t i = 1; i < n; ++i) if (better(kind == 1, g[i], g[best])) best = i; out[b] = g[best]; }
        }
        for (uint32_t b = 0; b < 8; ++b)
            if (any[b]) d[uint64_t(r) * uint64_t(dstRepStride) * 8 + b] = out[b];
    }
}
}  // namespace opforge_asc_detail
#define OPFORGE_ASC_BLOCK_REDUCE(NAME, KIND)                                                                           \
    template <typename T, bool isSetMask = true>                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeat, const int32_t mask,   \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,               \
                     OPFORGE_ASC_LOC) {                                                                                \
        static_assert(isSetMask, #NAME ": isSetMask=false (SetVectorMask) is not emulated");                           \
        if (mask < 0) opforge_asc::fail(opforge_asc::E_BADARG, #NAME, loc, "mask %d < 0", mask);                       \
        opforge_asc_detail::block_reduce(#NAME, KIND, dst, src, repeat,                                                \
                                         opforge_asc::vec::cont_mask<T>(#NAME, loc, uint64_t(mask)), dstRepStride,     \
                                         srcBlkStride, srcRepStride, loc);                                             \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeat,                       \
                     const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,                    \
                     const int32_t srcRepStride, OPFORGE_ASC_LOC) {                                                    \
        static_assert(isSetMask, #NAME ": isSetMask=false (SetVectorMask) is not emulated");                           \
        opforge_asc_detail::block_reduce(#NAME, KIND, dst, src, repeat, opforge_asc::vec::bit_mask<T>(#NAME, loc, mask), \
                                         dstRepStride, srcBlkStride, srcRepStride, loc);                               \
    }
OPFORGE_ASC_BLOCK_REDUCE(BlockReduceSum, 0)
OPFORGE_ASC_BLOCK_REDUCE(BlockReduceMax, 1)
OPFORGE_ASC_BLOCK_REDUCE(BlockReduceMin, 2)

// ========================================= Compare / Select ===========================================
// The comparison result is a bit mask: bit i%8 of byte i/8 of dst (least significant bit first) holds
// element i's result; Select reads the same layout (1 takes src0, 0 takes src1).
namespace opforge_asc_detail {
template <typename T> inline bool cmp(CMPMODE mode, T a, T b) {
    auto x = opforge_asc::vec::load(a), y = opforge_asc::vec::load(b);
    switch (mode) {
        case CMPMODE::LT: return x < y;
        case CMPMODE::GT: return x > y;
        case CMPMODE::EQ: return x == y;
        case CMPMODE::LE: return x <= y;
        case CMPMODE::GE: return x >= y;
        case CMPMODE::NE: return x != y;
    }
    return false;
}
template <typename U> inline bool bit_at(const U* sel, uint64_t i) {
    return (reinterpret_cast<const unsigned char*>(sel)[i / 8] >> (i % 8)) & 1u;
}
}  // namespace opforge_asc_detail

template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    uint32_t count, OPFORGE_ASC_LOC) {
    using namespace opforge_asc::vec;
    static_assert(hf<T> || std::is_same_v<T, int32_t>, "Compare: unsupported data type");
    static_assert(std::is_same_v<U, uint8_t>, "Compare: the result tensor is uint8_t");
    if ((uint64_t(count) * sizeof(T)) % 256 != 0)
        opforge_asc::fail(E_BADARG, "Compare", loc, "count %u x %u bytes is not a multiple of 256 bytes (Compare "
                          "needs the compared elements to fill whole 256-byte repeats)", count, unsigned(sizeof(T)));
    check_align("Compare", loc, dst, "dst"); check_align("Compare", loc, src0, "src0"); check_align("Compare", loc, src1, "src1");
    opforge_asc::vec_issue("Compare", loc, {src0.span(0, count), src1.span(0, count)}, {dst.span(0, count / 8)});
    U* d = dst.data_ptr();
    const T* a = src0.data_ptr(); const T* b = src1.data_ptr();
    for (uint32_t byte = 0; byte < count / 8; ++byte) {
        uint8_t v = 0;
        for (uint32_t k = 0; k < 8; ++k) v |= uint8_t(opforge_asc_detail::cmp(cmpMode, a[byte * 8 + k], b[byte * 8 + k]) << k);
        d[byte] = v;
    }
}

template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const opforge_same_t<T>& src1Scalar,
                          CMPMODE cmpMode, uint32_t count, OPFORGE_ASC_LOC) {
    using namespace opforge_asc::vec;
    static_assert(hf<T> || std::is_same_v<T, int32_t>, "CompareScalar: unsupported data type");
    static_assert(std::is_same_v<U, uint8_t>, "CompareScalar: the result tensor is uint8_t");
    if ((uint64_t(count) * sizeof(T)) % 32 != 0)
        opforge_asc::fail(E_BADARG, "CompareScalar", loc, "count %u x %u bytes is not a multiple of 32 bytes",
                          count, unsigned(sizeof(T)));
    check_align("CompareScalar", loc, dst, "dst"); check_align("CompareScalar", loc, src0, "src0");
    opforge_asc::vec_issue("CompareScalar", loc, {src0.span(0, count)}, {dst.span(0, count / 8)});
    U* d = dst.data_ptr();
    const T* a = src0.data_ptr();
    const T s = src1Scalar;
    for (uint32_t byte = 0; byte < count / 8; ++byte) {
        uint8_t v = 0;
        for (uint32_t k = 0; k < 8; ++k) v |= uint8_t(opforge_asc_detail::cmp(cmpMode, a[byte * 8 + k], s) << k);
        d[byte] = v;
    }
}

// modes: VSEL_CMPMASK_SPR (0): the first 256 bytes' worth of bits of selMask apply to every repeat;
// VSEL_TENSOR_TENSOR_MODE (2): one bit per element, consecutively; VSEL_TENSOR_SCALAR_MODE (1): the
// scalar form, one bit per element
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, uint32_t count, OPFORGE_ASC_LOC) {
    using namespace opforge_asc::vec;
    static_assert(hf<T>, "Select: unsupported data type (half/float)");
    if (selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE)
        opforge_asc::fail(E_BADARG, "Select", loc, "VSEL_TENSOR_SCALAR_MODE takes a scalar src1, not a tensor");
    check_align("Select", loc, dst, "dst"); check_align("Select", loc, selMask, "selMask");
    check_align("Select", loc, src0, "src0"); check_align("Select", loc, src1, "src1");
    const bool spr = selMode == SELMODE::VSEL_CMPMASK_SPR;
    uint64_t mask_bytes = spr ? std::min<uint64_t>(count, per_rep<T>()) : count;
    mask_bytes = (mask_bytes + 7) / 8;
    opforge_asc::vec_issue("Select", loc,
                           {src0.span(0, count), src1.span(0, count),
                            selMask.span(0, (mask_bytes + sizeof(U) - 1) / sizeof(U))},
                           {dst.span(0, count)});
    T* d = dst.data_ptr();
    const T* a = src0.data_ptr(); const T* b = src1.data_ptr(); const U* sel = selMask.data_ptr();
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t bit = spr ? i % per_rep<T>() : i;
        d[i] = opforge_asc_detail::bit_at(sel, bit) ? a[i] : b[i];
    }
}

template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   opforge_same_t<T> src1, SELMODE selMode, uint32_t count, OPFORGE_ASC_LOC) {
    using namespace opforge_asc::vec;
    static_assert(hf<T>, "Select: unsupported data type (half/float)");
    if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
        opforge_asc::fail(E_BADARG, "Select", loc, "a scalar src1 needs VSEL_TENSOR_SCALAR_MODE");
    check_align("Select", loc, dst, "dst"); check_align("Select", loc, selMask, "selMask");
    check_align("Select", loc, src0, "src0");
    uint64_t mask_bytes = (uint64_t(count) + 7) / 8;
    opforge_asc::vec_issue("Select", loc, {src0.span(0, count), selMask.span(0, (mask_bytes + sizeof(U) - 1) / sizeof(U))},
                           {dst.span(0, count)});
    T* d = dst.data_ptr();
    const T* a = src0.data_ptr(); const U* sel = selMask.data_ptr();
    const T s = src1;
    for (uint32_t i = 0; i < count; ++i) d[i] = opforge_asc_detail::bit_at(sel, i) ? a[i] : s;
}

#undef OPFORGE_ASC_BINARY
#undef OPFORGE_ASC_UNARY
#undef OPFORGE_ASC_SCALAR
#undef OPFORGE_ASC_MATH
#undef OPFORGE_ASC_REDUCE
#undef OPFORGE_ASC_WHOLE_MINMAX
#undef OPFORGE_ASC_BLOCK_REDUCE
#undef OPFORGE_ASC_COMMA
#undef OPFORGE_ASC_LOC

}  // namespace AscendC
