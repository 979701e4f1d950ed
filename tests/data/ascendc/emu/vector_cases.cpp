// The AscendC emulator's vector APIs (include/asc_vector.h) against plain reference loops written here
// from the documented semantics. Built by tests/test_ascendc_emu_vector.py with
// g++ -std=c++20 -I <emulator include>; vcase(name) runs one case: 0 = as documented, -1 = a wrong value
// (msg says which), otherwise the emulator's error code (msg: its message).
#include "kernel_operator.h"

#include <cstdio>
#include <functional>
#include <string>

using namespace AscendC;

namespace {

char g_msg[2048];

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            std::snprintf(g_msg, sizeof g_msg, __VA_ARGS__);               \
            return -1;                                                     \
        }                                                                  \
    } while (0)

// one core with six VECCALC buffers of 16 KB
struct Env {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b[6];
    Env() {
        opforge_asc::begin_call();
        opforge_asc::M().launch++;  // what launch() does before a core runs (GM bookkeeping is per launch)
        opforge_asc::start_core(0);
        for (auto& x : b) pipe.InitBuffer(x, 16384);
    }
    template <class T> LocalTensor<T> t(int i) { return b[i].Get<T>(); }
};

template <class T> void fill(LocalTensor<T> t, uint32_t n, const std::function<float(uint32_t)>& f) {
    for (uint32_t i = 0; i < n; ++i) t.data_ptr()[i] = T(f(i));
}
template <class T> void poison(LocalTensor<T> t, uint32_t n) { std::memset(t.data_ptr(), 0xAB, n * sizeof(T)); }
template <class T> bool poisoned(const T& v) {
    T p;
    std::memset(&p, 0xAB, sizeof p);
    return std::memcmp(&v, &p, sizeof p) == 0;
}
float f32(half h) { return float(h); }
uint16_t hbits(half h) { return h.bits; }
uint32_t fbits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

// the documented level-0 addressing, written independently of the header
uint64_t off(uint32_t esize, uint32_t r, uint32_t j, uint32_t blk, uint32_t rep) {
    uint32_t per = 32 / esize;
    return uint64_t(r) * rep * per + uint64_t(j / per) * blk * per + j % per;
}

// ------------------------------------------------------------------------------------------------------
int add_count_float() {
    Env e;
    auto x = e.t<float>(0), y = e.t<float>(1), z = e.t<float>(2);
    fill(x, 200, [](uint32_t i) { return i * 0.5f; });
    fill(y, 200, [](uint32_t i) { return 1.0f / (i + 1); });
    poison(z, 256);
    Add(z, x, y, 200);
    for (uint32_t i = 0; i < 200; ++i) CHECK(z.data_ptr()[i] == x.data_ptr()[i] + y.data_ptr()[i], "Add[%u]", i);
    for (uint32_t i = 200; i < 256; ++i) CHECK(poisoned(z.data_ptr()[i]), "Add wrote element %u past count", i);
    Sub(z, x, y, 200); Mul(z, z, y, 200);
    for (uint32_t i = 0; i < 200; ++i) CHECK(z.data_ptr()[i] == (x.data_ptr()[i] - y.data_ptr()[i]) * y.data_ptr()[i], "Sub/Mul[%u]", i);
    Div(z, x, y, 200);
    for (uint32_t i = 0; i < 200; ++i) CHECK(z.data_ptr()[i] == x.data_ptr()[i] / y.data_ptr()[i], "Div[%u]", i);
    Max(z, x, y, 200);
    for (uint32_t i = 0; i < 200; ++i) CHECK(z.data_ptr()[i] == std::max(x.data_ptr()[i], y.data_ptr()[i]), "Max[%u]", i);
    Min(z, x, y, 200);
    for (uint32_t i = 0; i < 200; ++i) CHECK(z.data_ptr()[i] == std::min(x.data_ptr()[i], y.data_ptr()[i]), "Min[%u]", i);
    return 0;
}

int add_count_half() {  // computed in float, rounded once to half
    Env e;
    auto x = e.t<half>(0), y = e.t<half>(1), z = e.t<half>(2);
    fill(x, 300, [](uint32_t i) { return 1000.0f + i * 0.37f; });
    fill(y, 300, [](uint32_t i) { return 0.3f + i * 0.011f; });
    Add(z, x, y, 300);
    for (uint32_t i = 0; i < 300; ++i)
        CHECK(hbits(z.data_ptr()[i]) == hbits(half(f32(x.data_ptr()[i]) + f32(y.data_ptr()[i]))), "half Add[%u]", i);
    Mul(z, x, y, 300);
    for (uint32_t i = 0; i < 300; ++i)
        CHECK(hbits(z.data_ptr()[i]) == hbits(half(f32(x.data_ptr()[i]) * f32(y.data_ptr()[i]))), "half Mul[%u]", i);
    return 0;
}

int add_count_int32() {  // integer arithmetic wraps
    Env e;
    auto x = e.t<int32_t>(0), y = e.t<int32_t>(1), z = e.t<int32_t>(2);
    fill(x, 16, [](uint32_t i) { return float(i); });
    x.data_ptr()[0] = INT32_MAX;
    fill(y, 16, [](uint32_t i) { return float(3 - int(i)); });
    y.data_ptr()[0] = 1;
    Add(z, x, y, 16);
    CHECK(z.data_ptr()[0] == INT32_MIN, "INT32_MAX + 1 = %d", z.data_ptr()[0]);
    for (int i = 1; i < 16; ++i) CHECK(z.data_ptr()[i] == 3, "int Add[%d] = %d", i, z.data_ptr()[i]);
    Max(z, x, y, 16);
    for (int i = 1; i < 16; ++i) CHECK(z.data_ptr()[i] == std::max(i, 3 - i), "int Max[%d]", i);
    Relu(z, y, 16);
    for (int i = 1; i < 16; ++i) CHECK(z.data_ptr()[i] == std::max(0, 3 - i), "int Relu[%d]", i);
    return 0;
}

int binary_mask_repeat() {  // continuous mask, 3 repeats, strided operands
    Env e;
    auto x = e.t<float>(0), y = e.t<float>(1), z = e.t<float>(2);
    fill(x, 2048, [](uint32_t i) { return float(i); });
    fill(y, 2048, [](uint32_t i) { return 10000.0f + i; });
    poison(z, 2048);
    BinaryRepeatParams p(2, 1, 3, 16, 8, 24);  // dstBlk, src0Blk, src1Blk, dstRep, src0Rep, src1Rep
    Add(z, x, y, uint64_t(40), 3, p);
    std::vector<int> written(2048, 0);
    for (uint32_t r = 0; r < 3; ++r)
        for (uint32_t j = 0; j < 40; ++j) {
            uint64_t d = off(4, r, j, 2, 16), a = off(4, r, j, 1, 8), b = off(4, r, j, 3, 24);
            CHECK(z.data_ptr()[d] == x.data_ptr()[a] + y.data_ptr()[b], "Add r%u j%u: dst[%llu] = %g, want %g", r, j,
                  (unsigned long long)d, z.data_ptr()[d], x.data_ptr()[a] + y.data_ptr()[b]);
            written[d] = 1;
        }
    for (uint32_t i = 0; i < 2048; ++i) CHECK(written[i] || poisoned(z.data_ptr()[i]), "Add wrote dst[%u] outside the mask", i);
    return 0;
}

int binary_bitmask_half() {  // bit mask: mask[0] elements 0..63, mask[1] 64..127 for 16-bit types
    Env e;
    auto x = e.t<half>(0), y = e.t<half>(1), z = e.t<half>(2);
    fill(x, 512, [](uint32_t i) { return float(i % 200); });
    fill(y, 512, [](uint32_t) { return 1.0f; });
    poison(z, 512);
    uint64_t mask[2] = {0x8000000000000001ull, 0x5ull};  // elements 0, 63, 64, 66
    Mul(z, x, y, mask, 2, BinaryRepeatParams());
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t j = 0; j < 128; ++j) {
            bool on = j == 0 || j == 63 || j == 64 || j == 66;
            const half& v = z.data_ptr()[r * 128 + j];
            if (on) CHECK(f32(v) == f32(x.data_ptr()[r * 128 + j]), "Mul r%u j%u", r, j);
            else CHECK(poisoned(v), "Mul wrote masked-off r%u j%u", r, j);
        }
    return 0;
}

int binary_bitmask_float() {  // 32-bit types: 64 elements a repeat, mask[1] is not used
    Env e;
    auto x = e.t<float>(0), y = e.t<float>(1), z = e.t<float>(2);
    fill(x, 256, [](uint32_t i) { return float(i); });
    fill(y, 256, [](uint32_t) { return 2.0f; });
    poison(z, 256);
    uint64_t mask[2] = {0xF0ull, ~0ull};
    Sub(z, x, y, mask, 2, BinaryRepeatParams());
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t j = 0; j < 64; ++j) {
            const float& v = z.data_ptr()[r * 64 + j];
            if (j >= 4 && j < 8) CHECK(v == float(r * 64 + j) - 2.0f, "Sub r%u j%u", r, j);
            else CHECK(poisoned(v), "Sub wrote masked-off r%u j%u", r, j);
        }
    return 0;
}

int mask_too_large() {  // a continuous mask over 64 for a 32-bit type
    Env e;
    auto x = e.t<float>(0);
    Add(x, x, x, uint64_t(65), 1, BinaryRepeatParams());
    return 0;
}

int unary_count_float() {
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    fill(x, 100, [](uint32_t i) { return 0.05f + i * 0.1f - 2.0f; });
    auto check = [&](const char* name, auto fn) -> int {
        for (uint32_t i = 0; i < 100; ++i) {
            float want = fn(x.data_ptr()[i]), got = z.data_ptr()[i];
            CHECK((std::isnan(want) && std::isnan(got)) || fbits(want) == fbits(got), "%s[%u] = %g, want %g", name, i, got, want);
        }
        return 0;
    };
    Exp(z, x, 100); if (check("Exp", [](float v) { return std::exp(v); })) return -1;
    Abs(z, x, 100); if (check("Abs", [](float v) { return std::fabs(v); })) return -1;
    Relu(z, x, 100); if (check("Relu", [](float v) { return v > 0 ? v : 0.0f; })) return -1;
    Reciprocal(z, x, 100); if (check("Reciprocal", [](float v) { return 1.0f / v; })) return -1;
    Abs(z, x, 100); Sqrt(z, z, 100); if (check("Sqrt", [](float v) { return std::sqrt(std::fabs(v)); })) return -1;
    Abs(z, x, 100); Ln(z, z, 100); if (check("Ln", [](float v) { return std::log(std::fabs(v)); })) return -1;
    Abs(z, x, 100); Rsqrt(z, z, 100); if (check("Rsqrt", [](float v) { return 1.0f / std::sqrt(std::fabs(v)); })) return -1;
    return 0;
}

int unary_rep_strides() {  // UnaryRepeatParams(dstBlk, srcBlk, dstRep, srcRep)
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    fill(x, 2048, [](uint32_t i) { return float(i) - 500.0f; });
    poison(z, 2048);
    Relu(z, x, uint64_t(64), 2, UnaryRepeatParams(1, 2, 8, 16));
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t j = 0; j < 64; ++j) {
            float want = std::max(0.0f, x.data_ptr()[off(4, r, j, 2, 16)]);
            CHECK(z.data_ptr()[off(4, r, j, 1, 8)] == want, "Relu r%u j%u", r, j);
        }
    CHECK(poisoned(z.data_ptr()[128]), "Relu wrote past 2 repeats");
    return 0;
}

int scalar_ops() {
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    fill(x, 100, [](uint32_t i) { return float(i) - 50.0f; });
    Adds(z, x, 2.5f, 100);
    for (uint32_t i = 0; i < 100; ++i) CHECK(z.data_ptr()[i] == x.data_ptr()[i] + 2.5f, "Adds[%u]", i);
    Muls(z, x, -3.0f, 100);
    for (uint32_t i = 0; i < 100; ++i) CHECK(z.data_ptr()[i] == x.data_ptr()[i] * -3.0f, "Muls[%u]", i);
    Maxs(z, x, 7.0f, 100);
    for (uint32_t i = 0; i < 100; ++i) CHECK(z.data_ptr()[i] == std::max(x.data_ptr()[i], 7.0f), "Maxs[%u]", i);
    Mins(z, x, 7.0f, 100);
    for (uint32_t i = 0; i < 100; ++i) CHECK(z.data_ptr()[i] == std::min(x.data_ptr()[i], 7.0f), "Mins[%u]", i);
    LeakyRelu(z, x, 0.25f, 100);
    for (uint32_t i = 0; i < 100; ++i) {
        float v = x.data_ptr()[i];
        CHECK(z.data_ptr()[i] == (v >= 0 ? v : v * 0.25f), "LeakyRelu[%u]", i);
    }
    poison(z, 256);
    Muls(z, x, 2.0f, uint64_t(16), 2, UnaryRepeatParams(1, 1, 4, 8));  // dst repeats 4 blocks apart
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t j = 0; j < 16; ++j) CHECK(z.data_ptr()[r * 32 + j] == x.data_ptr()[r * 64 + j] * 2.0f, "Muls rep r%u j%u", r, j);
    CHECK(poisoned(z.data_ptr()[16]), "Muls rep wrote past the mask");
    return 0;
}

int fused_ops() {  // MulAddDst: dst = src0*src1 + dst; FusedMulAdd: dst = src0*dst + src1; Axpy: dst += src*s
    Env e;
    auto x = e.t<float>(0), y = e.t<float>(1), z = e.t<float>(2);
    fill(x, 64, [](uint32_t i) { return float(i); });
    fill(y, 64, [](uint32_t i) { return float(i % 7); });
    fill(z, 64, [](uint32_t) { return 3.0f; });
    MulAddDst(z, x, y, 64);
    for (uint32_t i = 0; i < 64; ++i) CHECK(z.data_ptr()[i] == float(i) * float(i % 7) + 3.0f, "MulAddDst[%u]", i);
    fill(z, 64, [](uint32_t) { return 3.0f; });
    FusedMulAdd(z, x, y, 64);
    for (uint32_t i = 0; i < 64; ++i) CHECK(z.data_ptr()[i] == float(i) * 3.0f + float(i % 7), "FusedMulAdd[%u]", i);
    fill(z, 64, [](uint32_t) { return 1.0f; });
    Axpy(z, x, 0.5f, 64);
    for (uint32_t i = 0; i < 64; ++i) CHECK(z.data_ptr()[i] == 1.0f + float(i) * 0.5f, "Axpy[%u]", i);
    AddRelu(z, x, y, 64);
    for (uint32_t i = 0; i < 64; ++i) CHECK(z.data_ptr()[i] == float(i) + float(i % 7), "AddRelu[%u]", i);
    SubRelu(z, y, x, 64);
    for (uint32_t i = 0; i < 64; ++i) CHECK(z.data_ptr()[i] == std::max(0.0f, float(i % 7) - float(i)), "SubRelu[%u]", i);
    return 0;
}

int bitwise_int16() {
    Env e;
    auto x = e.t<int16_t>(0), y = e.t<int16_t>(1), z = e.t<int16_t>(2);
    for (int i = 0; i < 32; ++i) x.data_ptr()[i] = int16_t(i * 37), y.data_ptr()[i] = int16_t(0x0F0F);
    And(z, x, y, 32);
    for (int i = 0; i < 32; ++i) CHECK(z.data_ptr()[i] == int16_t((i * 37) & 0x0F0F), "And[%d]", i);
    Or(z, x, y, 32);
    for (int i = 0; i < 32; ++i) CHECK(z.data_ptr()[i] == int16_t((i * 37) | 0x0F0F), "Or[%d]", i);
    Not(z, x, 32);
    for (int i = 0; i < 32; ++i) CHECK(z.data_ptr()[i] == int16_t(~(i * 37)), "Not[%d]", i);
    return 0;
}

int duplicate_forms() {
    Env e;
    auto z = e.t<float>(2);
    poison(z, 512);
    Duplicate(z, 4.5f, 70);
    for (uint32_t i = 0; i < 70; ++i) CHECK(z.data_ptr()[i] == 4.5f, "Duplicate[%u]", i);
    CHECK(poisoned(z.data_ptr()[70]), "Duplicate wrote past count");
    poison(z, 512);
    Duplicate(z, -1.0f, uint64_t(8), 3, 1, 16);  // 8 elements a repeat, repeats 16 blocks apart
    for (uint32_t r = 0; r < 3; ++r)
        for (uint32_t j = 0; j < 16; ++j) {
            const float& v = z.data_ptr()[r * 128 + j];
            if (j < 8) CHECK(v == -1.0f, "Duplicate rep r%u j%u", r, j);
            else CHECK(poisoned(v), "Duplicate rep wrote masked-off r%u j%u", r, j);
        }
    return 0;
}

int math_library() {  // Sigmoid/Tanh/... : the function in float, rounded once; the whole-tensor form
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    auto tmp = e.t<uint8_t>(3);
    fill(x, 4096, [](uint32_t i) { return float(i % 97) * 0.1f - 4.0f; });
    Sigmoid(z, x, tmp, 100);
    for (uint32_t i = 0; i < 100; ++i) {
        float v = x.data_ptr()[i];
        CHECK(z.data_ptr()[i] == 1.0f / (1.0f + std::exp(-v)), "Sigmoid[%u]", i);
    }
    Tanh(z, x);
    for (uint32_t i = 0; i < 4096; ++i) CHECK(z.data_ptr()[i] == std::tanh(x.data_ptr()[i]), "Tanh[%u]", i);
    Floor(z, x, 100);
    for (uint32_t i = 0; i < 100; ++i) CHECK(z.data_ptr()[i] == std::floor(x.data_ptr()[i]), "Floor[%u]", i);
    return 0;
}

int brcb_blocks() {  // each of a repeat's 8 source elements fills one 32-byte block
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    fill(x, 64, [](uint32_t i) { return float(i + 1); });
    poison(z, 512);
    Brcb(z, x, 2, BrcbRepeatParams(2, 16));  // blocks 2 apart, repeats 16 blocks apart
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t b = 0; b < 8; ++b)
            for (uint32_t k = 0; k < 8; ++k)
                CHECK(z.data_ptr()[(r * 16 + b * 2) * 8 + k] == float(r * 8 + b + 1), "Brcb r%u b%u k%u", r, b, k);
    CHECK(poisoned(z.data_ptr()[8]), "Brcb wrote the gap block");
    return 0;
}

// ---- Cast ------------------------------------------------------------------------------------------------
int cast_float_to_half_modes() {
    Env e;
    auto x = e.t<float>(0);
    auto z = e.t<half>(2);
    const float ulp = 1.0f / 1024;  // half spacing in [1, 2)
    float in[6] = {1 + 0.25f * ulp, 1 + 0.5f * ulp, 1 + 0.75f * ulp, -(1 + 0.25f * ulp), -(1 + 0.5f * ulp), 3 * ulp + 1};
    for (int i = 0; i < 6; ++i) x.data_ptr()[i] = in[i];
    struct Want { RoundMode m; uint16_t bits[6]; };
    const Want wants[] = {
        {RoundMode::CAST_NONE, {0x3C00, 0x3C00, 0x3C01, 0xBC00, 0xBC00, 0x3C03}},
        {RoundMode::CAST_RINT, {0x3C00, 0x3C00, 0x3C01, 0xBC00, 0xBC00, 0x3C03}},
        {RoundMode::CAST_FLOOR, {0x3C00, 0x3C00, 0x3C00, 0xBC01, 0xBC01, 0x3C03}},
        {RoundMode::CAST_CEIL, {0x3C01, 0x3C01, 0x3C01, 0xBC00, 0xBC00, 0x3C03}},
        {RoundMode::CAST_ROUND, {0x3C00, 0x3C01, 0x3C01, 0xBC00, 0xBC01, 0x3C03}},
        {RoundMode::CAST_TRUNC, {0x3C00, 0x3C00, 0x3C00, 0xBC00, 0xBC00, 0x3C03}},
        {RoundMode::CAST_ODD, {0x3C01, 0x3C01, 0x3C01, 0xBC01, 0xBC01, 0x3C03}},
    };
    for (const Want& w : wants) {
        Cast(z, x, w.m, 6);
        for (int i = 0; i < 6; ++i)
            CHECK(hbits(z.data_ptr()[i]) == w.bits[i], "Cast float->half mode %d of %.9g = 0x%04x, want 0x%04x",
                  int(w.m), in[i], hbits(z.data_ptr()[i]), w.bits[i]);
    }
    return 0;
}

int cast_float_to_int32_modes() {
    Env e;
    auto x = e.t<float>(0);
    auto z = e.t<int32_t>(2);
    float in[8] = {2.5f, -2.5f, 3.5f, 2.4f, -2.6f, 3e9f, -3e9f, 0.0f};
    for (int i = 0; i < 8; ++i) x.data_ptr()[i] = in[i];
    struct Want { RoundMode m; int32_t v[8]; };
    const Want wants[] = {
        {RoundMode::CAST_RINT, {2, -2, 4, 2, -3, INT32_MAX, INT32_MIN, 0}},
        {RoundMode::CAST_NONE, {2, -2, 4, 2, -3, INT32_MAX, INT32_MIN, 0}},
        {RoundMode::CAST_FLOOR, {2, -3, 3, 2, -3, INT32_MAX, INT32_MIN, 0}},
        {RoundMode::CAST_CEIL, {3, -2, 4, 3, -2, INT32_MAX, INT32_MIN, 0}},
        {RoundMode::CAST_ROUND, {3, -3, 4, 2, -3, INT32_MAX, INT32_MIN, 0}},
        {RoundMode::CAST_TRUNC, {2, -2, 3, 2, -2, INT32_MAX, INT32_MIN, 0}},
    };
    for (const Want& w : wants) {
        Cast(z, x, w.m, 8);
        for (int i = 0; i < 8; ++i)
            CHECK(z.data_ptr()[i] == w.v[i], "Cast float->int32 mode %d of %g = %d, want %d", int(w.m), in[i],
                  z.data_ptr()[i], w.v[i]);
    }
    return 0;
}

int cast_other_directions() {
    Env e;
    auto h = e.t<half>(0);
    auto f = e.t<float>(1);
    auto i32 = e.t<int32_t>(2);
    auto b = e.t<bfloat16_t>(3);
    auto u8 = e.t<uint8_t>(4);
    fill(h, 64, [](uint32_t i) { return i * 0.125f - 3.0f; });
    Cast(f, h, RoundMode::CAST_NONE, 64);  // exact
    for (uint32_t i = 0; i < 64; ++i) CHECK(f.data_ptr()[i] == i * 0.125f - 3.0f, "half->float[%u]", i);
    Cast(f, f, RoundMode::CAST_FLOOR, 64);  // float -> float: an integral value in the mode
    for (uint32_t i = 0; i < 64; ++i) CHECK(f.data_ptr()[i] == std::floor(i * 0.125f - 3.0f), "float->float floor[%u]", i);
    for (int i = 0; i < 8; ++i) i32.data_ptr()[i] = 16777217 + i;  // 2^24 + 1 + i: not all floats
    Cast(f, i32, RoundMode::CAST_NONE, 8);
    for (int i = 0; i < 8; ++i) CHECK(f.data_ptr()[i] == float(16777217 + i), "int32->float[%d]", i);
    f.data_ptr()[0] = 1.0f + 1.0f / 256;  // bf16 has 7 mantissa bits: a tie, to even
    f.data_ptr()[1] = 1.0f + 3.0f / 256;
    Cast(b, f, RoundMode::CAST_RINT, 2);
    CHECK(b.data_ptr()[0].bits == 0x3F80 && b.data_ptr()[1].bits == 0x3F82, "float->bf16 = 0x%04x 0x%04x",
          b.data_ptr()[0].bits, b.data_ptr()[1].bits);
    Cast(f, b, RoundMode::CAST_NONE, 2);
    CHECK(f.data_ptr()[0] == 1.0f && f.data_ptr()[1] == 1.0f + 2.0f / 128, "bf16->float");
    f.data_ptr()[0] = 70000.0f;  // past half's largest finite (65504)
    const RoundMode modes[4] = {RoundMode::CAST_RINT, RoundMode::CAST_ROUND, RoundMode::CAST_FLOOR, RoundMode::CAST_ODD};
    const uint16_t over[4] = {0x7C00, 0x7C00, 0x7BFF, 0x7BFF};  // infinity; the largest finite in the directed modes
    for (int k = 0; k < 4; ++k) {
        Cast(h, f, modes[k], 1);
        CHECK(hbits(h.data_ptr()[0]) == over[k], "float->half 70000 mode %d = 0x%04x", int(modes[k]), hbits(h.data_ptr()[0]));
    }
    fill(h, 32, [](uint32_t i) { return i * 10.0f - 20.0f; });
    Cast(u8, h, RoundMode::CAST_NONE, 32);  // saturates
    for (uint32_t i = 0; i < 32; ++i) {
        float v = i * 10.0f - 20.0f;
        CHECK(u8.data_ptr()[i] == uint8_t(v < 0 ? 0 : v > 255 ? 255 : v), "half->uint8[%u] = %u", i, u8.data_ptr()[i]);
    }
    return 0;
}

int cast_odd_to_int() {  // CAST_ODD has no meaning for an integer destination
    Env e;
    auto x = e.t<float>(0);
    auto z = e.t<int32_t>(2);
    Cast(z, x, RoundMode::CAST_ODD, 8);
    return 0;
}

// ---- reductions --------------------------------------------------------------------------------------------
// the chosen summation: pairwise within each 256-byte repeat (neighbours first), each partial rounded to T;
// the per-repeat sums reduced again the same way
template <class T> float ref_tree(std::vector<float> v) {
    while (v.size() > 1) {
        std::vector<float> n;
        for (size_t i = 0; i + 1 < v.size(); i += 2) n.push_back(float(T(v[i] + v[i + 1])));
        if (v.size() & 1) n.push_back(v.back());
        v.swap(n);
    }
    return v.empty() ? 0.0f : v[0];
}
template <class T> float ref_reduce_sum(const std::vector<float>& all) {
    const size_t per = 256 / sizeof(T);
    std::vector<float> firsts;
    for (size_t b = 0; b < all.size(); b += per)
        firsts.push_back(ref_tree<T>(std::vector<float>(all.begin() + b, all.begin() + std::min(all.size(), b + per))));
    while (firsts.size() > 1) {
        std::vector<float> n;
        for (size_t b = 0; b < firsts.size(); b += per)
            n.push_back(ref_tree<T>(std::vector<float>(firsts.begin() + b, firsts.begin() + std::min(firsts.size(), b + per))));
        firsts.swap(n);
    }
    return firsts[0];
}

int reduce_sum_float() {
    Env e;
    auto x = e.t<float>(0), w = e.t<float>(1), z = e.t<float>(2);
    fill(x, 1000, [](uint32_t i) { return float(i % 17) - 8.0f; });
    poison(z, 8);
    ReduceSum(z, x, w, 1000);
    float want = 0;
    for (uint32_t i = 0; i < 1000; ++i) want += float(i % 17) - 8.0f;
    CHECK(z.data_ptr()[0] == want, "ReduceSum = %g, want %g", z.data_ptr()[0], want);
    CHECK(poisoned(z.data_ptr()[1]), "ReduceSum wrote dst[1]");
    return 0;
}

int reduce_sum_half_pairwise() {  // 2048 then 127 ones: one after another stays 2048 in half; pairwise does not
    Env e;
    auto x = e.t<half>(0), w = e.t<half>(1), z = e.t<half>(2);
    std::vector<float> v(300, 1.0f);
    v[0] = 2048.0f;
    v[128] = 2048.0f;
    for (uint32_t i = 0; i < 300; ++i) x.data_ptr()[i] = half(v[i]);
    ReduceSum(z, x, w, 300);
    float want = ref_reduce_sum<half>(v);
    CHECK(f32(z.data_ptr()[0]) == want, "half ReduceSum = %g, want %g (pairwise)", f32(z.data_ptr()[0]), want);
    CHECK(want != 2048.0f * 2, "reference sanity");
    return 0;
}

int reduce_max_index() {
    Env e;
    auto x = e.t<float>(0), w = e.t<float>(1), z = e.t<float>(2);
    fill(x, 1000, [](uint32_t i) { return float((i * 7919) % 1000) * 0.01f; });
    x.data_ptr()[777] = 50.0f;
    x.data_ptr()[900] = 50.0f;  // a tie: the first index
    poison(z, 8);
    ReduceMax(z, x, w, 1000, true);
    CHECK(z.data_ptr()[0] == 50.0f, "ReduceMax value %g", z.data_ptr()[0]);
    CHECK(fbits(z.data_ptr()[1]) == 777u, "ReduceMax index bits %u, want 777", fbits(z.data_ptr()[1]));
    poison(z, 8);
    ReduceMin(z, x, w, 1000);
    CHECK(z.data_ptr()[0] == 0.0f, "ReduceMin value %g", z.data_ptr()[0]);
    CHECK(poisoned(z.data_ptr()[1]), "ReduceMin without calIndex wrote dst[1]");
    auto h = e.t<half>(3), hw = e.t<half>(4), hz = e.t<half>(5);
    fill(h, 500, [](uint32_t i) { return -float(i % 100); });
    h.data_ptr()[321] = half(-1000.0f);
    ReduceMin(hz, h, hw, 500, true);
    CHECK(f32(hz.data_ptr()[0]) == -1000.0f, "half ReduceMin value");
    CHECK(hbits(hz.data_ptr()[1]) == 321, "half ReduceMin index bits %u, want 321", hbits(hz.data_ptr()[1]));
    return 0;
}

int reduce_work_too_small() {  // the work area holds the first round's results: here 16 repeats -> 16 floats
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    auto w = e.t<float>(1)[4088];  // 8 floats left in the buffer
    fill(x, 1024, [](uint32_t) { return 1.0f; });
    ReduceSum(z, x, w, 1024);
    return 0;
}

int whole_reduce_sum() {
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    fill(x, 1024, [](uint32_t i) { return float(i); });
    poison(z, 64);
    WholeReduceSum(z, x, 48, 4, 2, 1, 8);  // 48 elements of each of 4 repeats, results 2 floats apart
    for (uint32_t r = 0; r < 4; ++r) {
        float want = 0;
        for (uint32_t j = 0; j < 48; ++j) want += float(r * 64 + j);
        CHECK(z.data_ptr()[2 * r] == want, "WholeReduceSum r%u = %g, want %g", r, z.data_ptr()[2 * r], want);
        CHECK(poisoned(z.data_ptr()[2 * r + 1]), "WholeReduceSum wrote between results");
    }
    return 0;
}

int whole_reduce_max_orders() {
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    fill(x, 1024, [](uint32_t i) { return float((i * 37) % 64); });  // max 63 once per repeat
    poison(z, 64);
    WholeReduceMax(z, x, 64, 3, 1, 1, 8);  // value, index pairs; dstRepStride in pairs
    for (uint32_t r = 0; r < 3; ++r) {
        uint32_t at = 0;
        for (uint32_t j = 0; j < 64; ++j) if (x.data_ptr()[r * 64 + j] == 63.0f) { at = j; break; }
        CHECK(z.data_ptr()[2 * r] == 63.0f, "WholeReduceMax value r%u", r);
        CHECK(fbits(z.data_ptr()[2 * r + 1]) == at, "WholeReduceMax index r%u = %u, want %u (inside the repeat)", r,
              fbits(z.data_ptr()[2 * r + 1]), at);
    }
    poison(z, 64);
    WholeReduceMin(z, x, 64, 3, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
    for (uint32_t r = 0; r < 3; ++r) CHECK(z.data_ptr()[r] == 0.0f, "WholeReduceMin ONLY_VALUE r%u", r);
    CHECK(poisoned(z.data_ptr()[3]), "WholeReduceMin ONLY_VALUE wrote past 3 results");
    return 0;
}

int block_reduce_sum() {
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    fill(x, 1024, [](uint32_t i) { return float(i % 13); });
    poison(z, 64);
    BlockReduceSum(z, x, 2, 64, 1, 1, 8);
    for (uint32_t r = 0; r < 2; ++r)
        for (uint32_t b = 0; b < 8; ++b) {
            float want = 0;
            for (uint32_t k = 0; k < 8; ++k) want += float((r * 64 + b * 8 + k) % 13);
            CHECK(z.data_ptr()[r * 8 + b] == want, "BlockReduceSum r%u b%u", r, b);
        }
    CHECK(poisoned(z.data_ptr()[16]), "BlockReduceSum wrote past 2 repeats");
    return 0;
}

// ---- Compare / Select ----------------------------------------------------------------------------------------
int compare_select() {
    Env e;
    auto x = e.t<float>(0), y = e.t<float>(1), z = e.t<float>(2);
    auto m = e.t<uint8_t>(3);
    fill(x, 128, [](uint32_t i) { return float(i % 10); });
    fill(y, 128, [](uint32_t) { return 4.0f; });
    poison(m, 64);
    Compare(m, x, y, CMPMODE::LT, 128);
    for (uint32_t i = 0; i < 128; ++i) {
        bool bit = (m.data_ptr()[i / 8] >> (i % 8)) & 1;  // bit i%8 of byte i/8
        CHECK(bit == (float(i % 10) < 4.0f), "Compare LT bit %u", i);
    }
    CHECK(poisoned(m.data_ptr()[16]), "Compare wrote past count/8 bytes");
    Compare(m, x, y, CMPMODE::GE, 64);
    for (uint32_t i = 0; i < 64; ++i) CHECK(((m.data_ptr()[i / 8] >> (i % 8)) & 1) == (float(i % 10) >= 4.0f), "Compare GE bit %u", i);
    Compare(m, x, y, CMPMODE::LT, 128);
    Select(z, m, x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, 128);
    for (uint32_t i = 0; i < 128; ++i) CHECK(z.data_ptr()[i] == std::min(float(i % 10), 4.0f), "Select tensor[%u]", i);
    Select(z, m, x, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 128);
    for (uint32_t i = 0; i < 128; ++i) CHECK(z.data_ptr()[i] == (float(i % 10) < 4.0f ? float(i % 10) : -1.0f), "Select scalar[%u]", i);
    CompareScalar(m, x, 4.0f, CMPMODE::EQ, 64);
    for (uint32_t i = 0; i < 64; ++i) CHECK(((m.data_ptr()[i / 8] >> (i % 8)) & 1) == (i % 10 == 4), "CompareScalar EQ bit %u", i);
    return 0;
}

int compare_count_not_256_bytes() {  // 40 floats = 160 bytes: not whole repeats
    Env e;
    auto x = e.t<float>(0), y = e.t<float>(1);
    auto m = e.t<uint8_t>(3);
    Compare(m, x, y, CMPMODE::LT, 40);
    return 0;
}

// ---- what vec_issue sees ---------------------------------------------------------------------------------------
int count_past_tensor() {  // 16 KB buffer = 4096 floats
    Env e;
    auto x = e.t<float>(0), y = e.t<float>(1);
    auto z = e.t<float>(2)[4000];
    Add(z, x, y, 97);  // 96 left in the buffer
    return 0;
}

int count_exactly_fits() {  // the control: the same call with the count that fits
    Env e;
    auto x = e.t<float>(0), y = e.t<float>(1);
    auto z = e.t<float>(2)[4000];
    Add(z, x, y, 96);
    return 0;
}

int repeat_past_tensor() {  // 64 repeats of 8 blocks (256 B) = 16 KB; the 65th runs past
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    Exp(z, x, uint64_t(64), 65, UnaryRepeatParams());
    return 0;
}

int repeat_stride_past_tensor() {  // dst repeats 255 blocks apart: the 3rd repeat's last 6 blocks are past the 512
    Env e;
    auto x = e.t<float>(0), z = e.t<float>(2);
    Abs(z, x, uint64_t(64), 3, UnaryRepeatParams(1, 1, 255, 8));
    return 0;
}

int unaligned_operand() {  // 3 floats in: 12 bytes past a 32-byte boundary
    Env e;
    auto x = e.t<float>(0), y = e.t<float>(1), z = e.t<float>(2);
    Add(z, x[3], y, 32);
    return 0;
}

int vector_after_copy_in_without_sync() {  // DataCopy (MTE2) fills x, Add (V) reads it with nothing between
    Env e;
    auto* gm = (float*)opforge_asc::gm_alloc(1024 * 4, "x", false);
    GlobalTensor<float> g;
    g.SetGlobalBuffer(gm, 1024);
    auto x = e.t<float>(0), z = e.t<float>(2);
    DataCopy(x, g, 1024);
    Adds(z, x, 1.0f, 1024);
    return 0;
}

struct Case { const char* name; int (*fn)(); };
const Case kCases[] = {
    {"add_count_float", add_count_float}, {"add_count_half", add_count_half}, {"add_count_int32", add_count_int32},
    {"binary_mask_repeat", binary_mask_repeat}, {"binary_bitmask_half", binary_bitmask_half},
    {"binary_bitmask_float", binary_bitmask_float}, {"mask_too_large", mask_too_large},
    {"unary_count_float", unary_count_float}, {"unary_rep_strides", unary_rep_strides}, {"scalar_ops", scalar_ops},
    {"fused_ops", fused_ops}, {"bitwise_int16", bitwise_int16}, {"duplicate_forms", duplicate_forms},
    {"math_library", math_library}, {"brcb_blocks", brcb_blocks},
    {"cast_float_to_half_modes", cast_float_to_half_modes}, {"cast_float_to_int32_modes", cast_float_to_int32_modes},
    {"cast_other_directions", cast_other_directions}, {"cast_odd_to_int", cast_odd_to_int},
    {"reduce_sum_float", reduce_sum_float}, {"reduce_sum_half_pairwise", reduce_sum_half_pairwise},
    {"reduce_max_index", reduce_max_index}, {"reduce_work_too_small", reduce_work_too_small},
    {"whole_reduce_sum", whole_reduce_sum}, {"whole_reduce_max_orders", whole_reduce_max_orders},
    {"block_reduce_sum", block_reduce_sum}, {"compare_select", compare_select},
    {"compare_count_not_256_bytes", compare_count_not_256_bytes}, {"count_past_tensor", count_past_tensor},
    {"count_exactly_fits", count_exactly_fits}, {"repeat_past_tensor", repeat_past_tensor},
    {"repeat_stride_past_tensor", repeat_stride_past_tensor}, {"unaligned_operand", unaligned_operand},
    {"vector_after_copy_in_without_sync", vector_after_copy_in_without_sync},
};

}  // namespace

extern "C" int vcase(const char* name, char* msg, int msg_len) {
    g_msg[0] = 0;
    int rc = -2;
    for (const Case& c : kCases)
        if (std::string(name) == c.name) {
            try {
                rc = c.fn();
            } catch (const opforge_asc::EmuError& err) {
                rc = err.code;
                std::snprintf(g_msg, sizeof g_msg, "%s", err.msg.c_str());
            }
            opforge_asc::gm_release_all();
            break;
        }
    if (rc == -2) std::snprintf(g_msg, sizeof g_msg, "no case %s", name);
    std::snprintf(msg, msg_len, "%s", g_msg);
    return rc;
}
