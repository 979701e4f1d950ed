// The AscendC emulator's core, case by case: each wrong kernel beside its correct control (tests/test_ascendc_emu_core.py).
// run_case(name) runs one launch on fresh GM and returns 0 or the emulator's error code (message in msg).
#include "kernel_operator.h"
#include <functional>
#include <string>
using namespace AscendC;
using opforge_asc::gm_alloc;

constexpr uint32_t N = 1024;  // floats per core
static float *X, *Y, *Z, *W;  // W: 10 floats, a length that is not whole 32-byte blocks

// copy-in into a TBuf and compute on it: the copy (MTE2) and the add (V) need a flag between them
template <bool SYNC> void tbuf_sync(uint32_t cores) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, b;
    pipe.InitBuffer(a, N * 4);
    pipe.InitBuffer(b, N * 4);
    GlobalTensor<float> x, z;
    x.SetGlobalBuffer(X + GetBlockIdx() * N, N);
    z.SetGlobalBuffer(Z + GetBlockIdx() * N, N);
    LocalTensor<float> la = a.Get<float>(), lb = b.Get<float>();
    DataCopy(la, x, N);
    if (SYNC) { SetFlag<HardEvent::MTE2_V>(0); WaitFlag<HardEvent::MTE2_V>(0); }
    Adds(lb, la, 1.0f, N);
    if (SYNC) { SetFlag<HardEvent::V_MTE3>(0); WaitFlag<HardEvent::V_MTE3>(0); }
    DataCopy(z, lb, N);
}

// a scalar read of a vector result needs V -> S
template <bool SYNC> void reduce_read() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, w, s;
    pipe.InitBuffer(a, N * 4);
    pipe.InitBuffer(w, N * 4);
    pipe.InitBuffer(s, 32);
    GlobalTensor<float> x, z;
    x.SetGlobalBuffer(X + GetBlockIdx() * N, N);
    z.SetGlobalBuffer(Z + GetBlockIdx() * N, N);
    LocalTensor<float> la = a.Get<float>(), lw = w.Get<float>(), ls = s.Get<float>();
    DataCopy(la, x, N);
    SetFlag<HardEvent::MTE2_V>(0); WaitFlag<HardEvent::MTE2_V>(0);
    ReduceSum(ls, la, lw, N);
    if (SYNC) { SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0); }
    float total = ls.GetValue(0);
    z.SetValue(0, total);
}

// the standard double-buffered pipeline with one line changed
template <int BUG> void pipeline() {
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> qx;
    TQue<QuePosition::VECOUT, 2> qz;
    constexpr uint32_t T = 256;
    pipe.InitBuffer(qx, 2, T * 4);
    pipe.InitBuffer(qz, 2, T * 4);
    GlobalTensor<float> x, z;
    x.SetGlobalBuffer(X + GetBlockIdx() * N, N);
    z.SetGlobalBuffer(Z + GetBlockIdx() * N, N);
    for (uint32_t i = 0; i < N / T; i++) {
        LocalTensor<float> lx = qx.AllocTensor<float>();
        DataCopy(lx, x[i * T], T);
        if (BUG != 1) qx.EnQue(lx);
        LocalTensor<float> in = BUG == 1 ? lx : qx.DeQue<float>();
        LocalTensor<float> lz = qz.AllocTensor<float>();
        Muls(lz, in, 2.0f, T);
        qz.EnQue(lz);
        if (BUG != 2) qx.FreeTensor(in);
        LocalTensor<float> out = qz.DeQue<float>();
        if (BUG == 3) qz.FreeTensor(out);
        DataCopy(z[i * T], out, T);
        if (BUG != 3) qz.FreeTensor(out);
        if (BUG == 4) Duplicate(out, 0.0f, T);  // writes a freed buffer
    }
    if (BUG == 5) qz.DeQue<float>();
}

void ub_plan(uint32_t kb) {
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> q;
    pipe.InitBuffer(q, 2, kb * 1024);
}

template <int BUG> void gm_cases() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a;
    pipe.InitBuffer(a, N * 4 + 32);
    LocalTensor<float> la = a.Get<float>();
    GlobalTensor<float> x, z;
    uint32_t me = GetBlockIdx();
    x.SetGlobalBuffer(X + me * N, N);
    // BUG 1: core 0 writes 8 elements past its slice, into core 1's
    z.SetGlobalBuffer(Z + me * N + (BUG == 1 && me == 0 ? 8 : 0), N);
    DataCopy(la, x, N);
    SetFlag<HardEvent::MTE2_MTE3>(0); WaitFlag<HardEvent::MTE2_MTE3>(0);
    if (BUG == 2) { DataCopy(z, la[4], N - 8); return; }  // UB address 16 bytes in: misaligned
    if (BUG == 3 && me == GetBlockNum() - 1) { DataCopy(z[8], la, N); return; }  // the last core past the end
    DataCopy(z, la, N);
    if (BUG == 4 || BUG == 5) {  // read back what MTE3 wrote: needs MTE3 -> MTE2
        if (BUG == 5) { SetFlag<HardEvent::MTE3_MTE2>(0); WaitFlag<HardEvent::MTE3_MTE2>(0); }
        DataCopy(la, z, N);
    }
}

template <bool ATOMIC> void all_cores_add() {  // every core adds its row into Z[0:N]
    TPipe pipe;
    TBuf<TPosition::VECCALC> a;
    pipe.InitBuffer(a, N * 4);
    LocalTensor<float> la = a.Get<float>();
    GlobalTensor<float> x, z;
    x.SetGlobalBuffer(X + GetBlockIdx() * N, N);
    z.SetGlobalBuffer(Z, N);
    DataCopy(la, x, N);
    SetFlag<HardEvent::MTE2_MTE3>(0); WaitFlag<HardEvent::MTE2_MTE3>(0);
    if (ATOMIC) SetAtomicAdd<float>();
    DataCopy(z, la, N);
    if (ATOMIC) SetAtomicNone();
}

template <bool PAD> void ragged() {  // 10 floats: DataCopy moves one 32-byte block (8); DataCopyPad all 10
    TPipe pipe;
    TBuf<TPosition::VECCALC> a;
    pipe.InitBuffer(a, 64);
    LocalTensor<float> la = a.Get<float>();
    GlobalTensor<float> x, z;
    x.SetGlobalBuffer(X + GetBlockIdx() * 16, 16);
    z.SetGlobalBuffer(Z + GetBlockIdx() * 16, 16);
    if (PAD) DataCopyPad(la, x, DataCopyExtParams(1, 40, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    else DataCopy(la, x, 10);
    SetFlag<HardEvent::MTE2_MTE3>(0); WaitFlag<HardEvent::MTE2_MTE3>(0);
    if (PAD) DataCopyPad(z, la, DataCopyExtParams(1, 40, 0, 0, 0));
    else DataCopy(z, la, 10);
}

// a scalar store then a copy-out of it: the documentation's SetValue -> DataCopy needs S -> MTE3
template <bool SYNC> void scalar_store() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a;
    pipe.InitBuffer(a, 32);
    LocalTensor<float> la = a.Get<float>();
    GlobalTensor<float> z;
    z.SetGlobalBuffer(Z + GetBlockIdx() * 8, 8);
    for (int i = 0; i < 8; i++) la.SetValue(i, (float)i);
    if (SYNC) { TQueSync<PIPE_S, PIPE_MTE3> sync; sync.SetFlag(0); sync.WaitFlag(0); }
    DataCopy(z, la, 8);
}

// the 32-byte block W ends in may be read (device buffers are whole blocks: garbage past the end), not written
template <int CASE> void tail_block() {
    TPipe pipe;
    TBuf<TPosition::VECCALC> a;
    pipe.InitBuffer(a, 128);
    LocalTensor<float> la = a.Get<float>();
    GlobalTensor<float> w;
    w.SetGlobalBuffer(W, 10);
    if (GetBlockIdx() != 0) return;
    if (CASE == 0) DataCopy(la, w, 16);  // bytes 0..63: the buffer's 40 and the rest of its last block
    if (CASE == 1) DataCopy(la, w, 24);  // bytes 0..95: a block past it
    if (CASE == 2) { Duplicate(la, 1.0f, 16); PipeBarrier<PIPE_ALL>(); DataCopy(w, la, 16); }
}

void wait_unset() { WaitFlag<HardEvent::V_S>(3); }

static const std::map<std::string, std::function<void()>> kCases = {
    {"tbuf_nosync", [] { tbuf_sync<false>(4); }}, {"tbuf_sync", [] { tbuf_sync<true>(4); }},
    {"reduce_nosync", [] { reduce_read<false>(); }}, {"reduce_sync", [] { reduce_read<true>(); }},
    {"pipeline", [] { pipeline<0>(); }}, {"pipeline_no_enque", [] { pipeline<1>(); }},
    {"pipeline_no_free", [] { pipeline<2>(); }}, {"pipeline_free_early", [] { pipeline<3>(); }},
    {"pipeline_write_freed", [] { pipeline<4>(); }}, {"pipeline_deque_empty", [] { pipeline<5>(); }},
    {"ub_fits", [] { ub_plan(96); }}, {"ub_over", [] { ub_plan(97); }},
    {"gm_ok", [] { gm_cases<0>(); }}, {"gm_overlap", [] { gm_cases<1>(); }}, {"gm_misaligned", [] { gm_cases<2>(); }},
    {"gm_past_end", [] { gm_cases<3>(); }}, {"gm_readback_nosync", [] { gm_cases<4>(); }},
    {"gm_readback_sync", [] { gm_cases<5>(); }},
    {"atomic_add", [] { all_cores_add<true>(); }}, {"plain_add", [] { all_cores_add<false>(); }},
    {"ragged_copy", [] { ragged<false>(); }}, {"ragged_pad", [] { ragged<true>(); }},
    {"wait_unset", [] { wait_unset(); }},
    {"tail_read", [] { tail_block<0>(); }}, {"tail_read_far", [] { tail_block<1>(); }},
    {"tail_write", [] { tail_block<2>(); }},
    {"store_nosync", [] { scalar_store<false>(); }}, {"store_sync", [] { scalar_store<true>(); }},
};

extern "C" int run_case(const char* name, int schedule, float* out, char* msg, int cap) {
    using namespace opforge_asc;
    X = (float*)gm_alloc(4 * N * 4, "argument x", false);
    Y = (float*)gm_alloc(4 * N * 4, "argument y", false);
    Z = (float*)gm_alloc(4 * N * 4, "output z", true);
    W = (float*)gm_alloc(40, "argument w", false);
    for (uint32_t i = 0; i < 4 * N; i++) X[i] = (float)(i % 97), Y[i] = 1.0f;
    if (std::string(name).find("_add") != std::string::npos) std::memset(Z, 0, 4 * N * 4);  // accumulated into
    configure(schedule, 7);
    begin_call();
    int code = 0;
    try {
        launch(name, 4, [&] { kCases.at(name)(); });
    } catch (EmuError& e) {
        code = e.code;
        snprintf(msg, cap, "%s", e.msg.c_str());
    }
    std::memcpy(out, Z, 4 * N * 4);
    gm_release_all();
    return code;
}
