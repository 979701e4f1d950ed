// opforge AscendC emulator: data movement. DataCopy moves whole 32-byte blocks (its lengths and strides count
// blocks; an element count whose bytes are not a multiple of 32 is refused: the hardware would drop the tail); DataCopyPad moves exact bytes (its GM lengths and strides count bytes, its UB strides blocks;
// each UB row is padded to a 32-byte boundary). GM -> UB runs on MTE2, UB -> GM on MTE3 (adding into GM under
// SetAtomicAdd), UB -> UB on V. UB addresses must be 32-byte aligned.
#pragma once
#include "asc_tensor.h"

namespace AscendC {

struct DataCopyParams {
    uint16_t blockCount = 1, blockLen = 0, srcStride = 0, dstStride = 0;
    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t src, uint16_t dst)
        : blockCount(count), blockLen(len), srcStride(src), dstStride(dst) {}
};
struct DataCopyExtParams {
    uint16_t blockCount = 1;
    uint32_t blockLen = 0, srcStride = 0, dstStride = 0, rsv = 0;
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t src, uint32_t dst, uint32_t r = 0)
        : blockCount(count), blockLen(len), srcStride(src), dstStride(dst), rsv(r) {}
};
struct DataCopyPadParams {
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    uint64_t paddingValue = 0;
    DataCopyPadParams() = default;
    DataCopyPadParams(bool pad, uint8_t left, uint8_t right, uint64_t value)
        : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
};
template <typename T> struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    T paddingValue = 0;
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value)
        : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

template <typename T> inline void SetAtomicAdd(Loc loc = Loc::here()) {
    auto& m = opforge_asc::M();
    m.atomic_add = true;
    m.any_atomic = true;
    m.atomic_type = std::is_same_v<T, float> ? 1 : std::is_same_v<T, half> ? 2 : std::is_same_v<T, int32_t> ? 3
                    : std::is_same_v<T, int16_t> ? 4 : std::is_same_v<T, int8_t> ? 5 : std::is_same_v<T, bfloat16_t> ? 6 : 0;
    if (!m.atomic_type) opforge_asc::fail(opforge_asc::E_BADARG, "SetAtomicAdd", loc, "type not supported for atomic add");
}
inline void SetAtomicNone() { opforge_asc::M().atomic_add = false; }

namespace detail {
using opforge_asc::fail;

// DataCopy's element count as 32-byte blocks. The documentation requires count x sizeof(T) to be whole blocks; the
// hardware moves only the whole ones, dropping a ragged tail, so a ragged count is refused with the numbers.
inline uint16_t whole_blocks(uint64_t bytes, Loc loc) {
    if (bytes % 32)
        fail(opforge_asc::E_ALIGN, "DataCopy", loc, "moves whole 32-byte blocks, and the count's %llu bytes are not: the "
             "last %llu bytes would be dropped (DataCopyPad moves a ragged tail)", (unsigned long long)bytes,
             (unsigned long long)(bytes % 32));
    return (uint16_t)(bytes / 32);
}

inline void ub_aligned(const char* api, Loc loc, const void* p) {
    if (opforge_asc::ub_offset(p) % 32)
        fail(opforge_asc::E_ALIGN, api, loc, "UB address %u is not 32-byte aligned (a LocalTensor offset whose "
             "bytes are not a multiple of 32)", opforge_asc::ub_offset(p));
}

template <typename T> inline void add_into(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
    for (uint64_t i = 0; i + sizeof(T) <= bytes; i += sizeof(T)) {
        T a, b;
        std::memcpy(&a, dst + i, sizeof(T));
        std::memcpy(&b, src + i, sizeof(T));
        T r = (T)(opforge_asc::compute_t<T>(a) + opforge_asc::compute_t<T>(b));
        std::memcpy(dst + i, &r, sizeof(T));
    }
}

// One contiguous run of a copy: checks, race records, then the bytes.
inline void move(const char* api, Loc loc, int pipe, uint8_t* dst, bool dst_gm, const uint8_t* src, bool src_gm,
                 uint64_t bytes) {
    using namespace opforge_asc;
    if (!bytes) return;
    Machine& m = M();
    bool atomic = dst_gm && m.atomic_add;
    if (src_gm) gm_access(pipe, api, loc, src, bytes, false, false);
    else ub_access(pipe, api, loc, {src, bytes}, false);
    if (dst_gm) gm_access(pipe, api, loc, dst, bytes, true, atomic);
    else ub_access(pipe, api, loc, {dst, bytes}, true);
    if (!atomic) {
        std::memmove(dst, src, bytes);
        return;
    }
    switch (m.atomic_type) {
        case 1: add_into<float>(dst, src, bytes); break;
        case 2: add_into<half>(dst, src, bytes); break;
        case 3: add_into<int32_t>(dst, src, bytes); break;
        case 4: add_into<int16_t>(dst, src, bytes); break;
        case 5: add_into<int8_t>(dst, src, bytes); break;
        default: add_into<bfloat16_t>(dst, src, bytes); break;
    }
}

// blockCount rows of `len` bytes, `sgap` / `dgap` bytes between rows.
inline void rows(const char* api, Loc loc, int pipe, uint8_t* dst, bool dst_gm, const uint8_t* src, bool src_gm,
                 uint32_t count, uint64_t len, uint64_t sgap, uint64_t dgap, uint64_t dlen) {
    opforge_asc::step(api, loc);
    opforge_asc::issue(pipe);
    if (!dst_gm) ub_aligned(api, loc, dst);
    if (!src_gm) ub_aligned(api, loc, src);
    for (uint32_t i = 0; i < count; i++)
        move(api, loc, pipe, dst + i * (dlen + dgap), dst_gm, src + i * (len + sgap), src_gm, len);
}
}  // namespace detail

// -- DataCopy -------------------------------------------------------------------------------------------------
template <typename T> void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                                    Loc loc = Loc::here()) {
    detail::rows("DataCopy", loc, opforge_asc::P_MTE2, (uint8_t*)dst.data_ptr(), false, (const uint8_t*)src.address_(),
                 true, p.blockCount, p.blockLen * 32ull, p.srcStride * 32ull, p.dstStride * 32ull, p.blockLen * 32ull);
}
template <typename T> void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                                    Loc loc = Loc::here()) {
    detail::rows("DataCopy", loc, opforge_asc::P_MTE3, (uint8_t*)dst.address_(), true, (const uint8_t*)src.data_ptr(),
                 false, p.blockCount, p.blockLen * 32ull, p.srcStride * 32ull, p.dstStride * 32ull, p.blockLen * 32ull);
}
template <typename T> void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                                    Loc loc = Loc::here()) {
    detail::rows("DataCopy", loc, opforge_asc::P_V, (uint8_t*)dst.data_ptr(), false, (const uint8_t*)src.data_ptr(),
                 false, p.blockCount, p.blockLen * 32ull, p.srcStride * 32ull, p.dstStride * 32ull, p.blockLen * 32ull);
}
template <typename T> void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count,
                                    Loc loc = Loc::here()) {
    DataCopy(dst, src, DataCopyParams(1, detail::whole_blocks(count * sizeof(T), loc), 0, 0), loc);
}
template <typename T> void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,
                                    Loc loc = Loc::here()) {
    DataCopy(dst, src, DataCopyParams(1, detail::whole_blocks(count * sizeof(T), loc), 0, 0), loc);
}
template <typename T> void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,
                                    Loc loc = Loc::here()) {
    DataCopy(dst, src, DataCopyParams(1, detail::whole_blocks(count * sizeof(T), loc), 0, 0), loc);
}

// -- DataCopyPad: exact bytes -----------------------------------------------------------------------------------
template <typename T> void pad_rows(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint16_t count,
                                    uint32_t len, uint32_t sgap, uint32_t dgap_blocks, bool pad, uint8_t left,
                                    uint8_t right, T value, Loc loc) {
    uint64_t row = ((uint64_t)left * sizeof(T) + len + 31) / 32 * 32;
    uint8_t* d = (uint8_t*)dst.data_ptr();
    detail::rows("DataCopyPad", loc, opforge_asc::P_MTE2, d + left * sizeof(T), false, (const uint8_t*)src.address_(),
                 true, count, len, sgap, dgap_blocks * 32ull + row - len, len);
    if (!pad) return;
    for (uint16_t i = 0; i < count; i++) {  // the padding the copy writes: left elements, then up to the row's end
        uint8_t* r = d + i * (row + dgap_blocks * 32ull);
        opforge_asc::ub_access(opforge_asc::P_MTE2, "DataCopyPad", loc, {r, row}, true);
        for (uint32_t k = 0; k < left; k++) std::memcpy(r + k * sizeof(T), &value, sizeof(T));
        for (uint64_t off = left * sizeof(T) + len; off + sizeof(T) <= row; off += sizeof(T))
            std::memcpy(r + off, &value, sizeof(T));
        (void)right;
    }
}
template <typename T> void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                                       const DataCopyPadExtParams<T>& pad, Loc loc = Loc::here()) {
    pad_rows(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad, pad.leftPadding,
             pad.rightPadding, pad.paddingValue, loc);
}
template <typename T> void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                                       const DataCopyPadParams& pad, Loc loc = Loc::here()) {
    T value;
    uint64_t v = pad.paddingValue;
    std::memcpy(&value, &v, sizeof(T) < 8 ? sizeof(T) : 8);
    pad_rows(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad, pad.leftPadding,
             pad.rightPadding, value, loc);
}
template <typename T> void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p,
                                       Loc loc = Loc::here()) {
    uint64_t row = (p.blockLen + 31ull) / 32 * 32;
    detail::rows("DataCopyPad", loc, opforge_asc::P_MTE3, (uint8_t*)dst.address_(), true,
                 (const uint8_t*)src.data_ptr(), false, p.blockCount, p.blockLen, p.srcStride * 32ull + row - p.blockLen,
                 p.dstStride, p.blockLen);
}
template <typename T> void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                                       Loc loc = Loc::here()) {
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride), loc);
}

}  // namespace AscendC
