// opforge AscendC emulator: the machine. Written from Huawei's public Ascend C documentation (programming model,
// API reference); no Huawei header is used. What a kernel runs on here:
// - AI cores as blocks: one launch runs the kernel once per block index, cores one after another in the schedule's
//   order (forward, reverse, seeded shuffle); cores are concurrent on the NPU, so GM bytes one core writes and
//   another reads or writes in the same launch are a race (no SyncAll modelled), atomic adds excepted.
// - Per core, four pipes: S (scalar), MTE2 (GM -> UB), V (vector), MTE3 (UB -> GM). Every API runs at once, in
//   program order: one convenient order. The others are covered by a happens-before race detector: vector clocks
//   per pipe; an instruction issued to pipe P follows everything the scalar unit did before it (issue order); P -> Q
//   order exists only through SetFlag/WaitFlag, EnQue/DeQue, FreeTensor/AllocTensor and PipeBarrier<PIPE_ALL>;
//   each pipe is in order with itself. Two accesses to one 32-byte UB block from different pipes, one a write, not
//   ordered: `race`. Without races every schedule computes what program order computes.
// - The unified buffer: one arena per core (the target's size), carved by InitBuffer, poisoned (0xFF) when a
//   tensor is allocated and when the core starts; GM: regions with guard zones, registered by the host side.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <random>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
#define __inline__ inline
typedef uint8_t* GM_ADDR;

namespace opforge_asc {

enum Code { E_OOB = 1, E_RACE = 2, E_UAF = 3, E_DEADLOCK = 4, E_ALIGN = 5, E_UB = 6, E_UNSUPPORTED = 7,
            E_BADARG = 8, E_LIMIT = 9, E_HOST = 10 };

struct EmuError {
    int code;
    std::string msg;
};

struct Loc {
    const char* file;
    unsigned line;
    static Loc here(std::source_location s = std::source_location::current()) { return {s.file_name(), s.line()}; }
    const char* base() const {
        const char* slash = std::strrchr(file, '/');
        return slash ? slash + 1 : file;
    }
};

struct Target {
    const char* name;
    uint32_t ub_bytes, aiv_cores, aic_cores;
};
// Unified buffer and cores per SoC, from Huawei's published specifications (Atlas A2 training / inference: 192 KB
// UB per vector core, 24 AI cores with 2 vector cores each; Atlas 300I Duo (310P): 256 KB, 8 AI cores).
inline const Target kTargets[] = {{"ascend910b", 192 * 1024, 48, 24}, {"ascend310p", 256 * 1024, 8, 8}};

// P_SW is the scalar unit's stores: they reach UB or GM only through a flag from S (the documentation's SetValue
// then DataCopy needs SetFlag<S_MTE3>), while its loads complete before it issues anything else.
enum Pipe { P_S = 0, P_MTE2 = 1, P_V = 2, P_MTE3 = 3, P_SW = 4, NPIPE = 5 };
inline const char* pipe_name(int p) {
    static const char* names[] = {"S (scalar)", "MTE2 (copy-in)", "V (vector)", "MTE3 (copy-out)", "S (scalar store)"};
    return names[p];
}

struct VC {
    uint32_t c[NPIPE] = {0, 0, 0, 0, 0};
    void join(const VC& o) {
        for (int i = 0; i < NPIPE; i++) c[i] = std::max(c[i], o.c[i]);
    }
};

struct Access {  // who last touched a UB block / GM block: for the race detector and its message
    uint32_t ts = 0;
    const char* api = nullptr;
    unsigned line = 0;
};

struct UbBlock {
    uint8_t wpipe = 0;
    Access w;
    Access r[NPIPE];
};

struct Span {
    const void* ptr;
    uint64_t bytes;
};

// A UB buffer: a queue's slot or a TBuf, carved from the arena by InitBuffer.
struct Buffer {
    uint32_t offset = 0, bytes = 0;
    int state = 0;  // 0 free, 1 allocated, 2 enqueued, 3 always live (TBuf)
    int queue = -1;
    Loc init{"", 0};
    VC freed;  // the consumer pipe's clock when it was last freed (AllocTensor waits on it)
};

struct GmRegion {
    uint8_t* base;  // first byte of the body
    uint64_t bytes;
    std::string what;
    std::vector<int16_t> wcore, rcore;  // per byte: the core that wrote / read it in this launch (-1 none, -2 several)
    uint64_t launch = ~0ull;            // the launch those arrays describe (none yet)
    struct Block {
        uint64_t core = ~0ull;  // core run (launch << 16 | core) the entry belongs to
        uint8_t wpipe = 0;
        Access w, r[NPIPE];
    };
    std::vector<Block> blocks;  // per 32 bytes: pipe order inside one core
};

constexpr uint64_t kGuard = 32 * 1024;

struct Machine {
    const Target* target = &kTargets[0];
    int schedule = 0;
    uint64_t seed = 0;
    double time_limit_s = 60.0;
    uint64_t steps = 0, step_limit = 400000000ull;
    timespec started{};
    // the current core
    uint32_t block_idx = 0, block_num = 1;
    uint64_t launch = 0;
    std::string kernel;
    uint8_t* ub = nullptr;  // the arena, 4 KB aligned
    uint32_t ub_size = 0;
    uint32_t ub_used = 0;
    std::vector<UbBlock> ub_shadow;
    VC vc[NPIPE];
    std::vector<Buffer> buffers;
    std::map<uint64_t, std::deque<VC>> flags;  // (src, dst, event) -> snapshots set and not yet waited
    bool atomic_add = false;
    int atomic_type = 0;  // 1 float, 2 half, 3 int32, 4 int16, 5 int8, 6 bf16
    uint32_t next_event = 0;
    bool any_atomic = false;
    // GM
    std::vector<GmRegion*> regions;  // sorted by base
};

inline Machine& M() {
    static Machine m;
    return m;
}

[[noreturn]] inline void fail(int code, const char* api, Loc loc, const char* fmt, ...) {
    char detail[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    char msg[1400];
    snprintf(msg, sizeof msg, "%s in kernel %s, core %u of %u (%s:%u): %s", api, M().kernel.c_str(), M().block_idx,
             M().block_num, loc.base(), loc.line, detail);
    throw EmuError{code, msg};
}

inline void step(const char* api, Loc loc) {
    Machine& m = M();
    if (++m.steps > m.step_limit) fail(E_LIMIT, api, loc, "more than %llu API calls: a loop that never ends?",
                                       (unsigned long long)m.step_limit);
    if ((m.steps & 4095) == 0) {
        timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double s = (now.tv_sec - m.started.tv_sec) + 1e-9 * (now.tv_nsec - m.started.tv_nsec);
        if (s > m.time_limit_s) fail(E_LIMIT, api, loc, "the call ran past its %.0f s limit", m.time_limit_s);
    }
}

// -- the unified buffer ---------------------------------------------------------------------------------------
inline uint32_t ub_offset(const void* p) { return (uint32_t)((const uint8_t*)p - M().ub); }

inline Buffer* buffer_at(const void* p) {
    Machine& m = M();
    const uint8_t* q = (const uint8_t*)p;
    if (q < m.ub || q >= m.ub + m.ub_size) return nullptr;
    uint32_t off = ub_offset(p);
    for (Buffer& b : m.buffers)
        if (off >= b.offset && off < b.offset + b.bytes) return &b;
    return nullptr;
}

inline const char* kind_of_buffer(const Buffer& b) { return b.queue >= 0 ? "a queue buffer" : "a TBuf"; }

// The span must lie in one live buffer: out of range or after FreeTensor otherwise.
inline void check_ub(const char* api, Loc loc, Span s, bool write) {
    Buffer* b = buffer_at(s.ptr);
    if (!b) fail(E_OOB, api, loc, "%s UB offset %u, which is in no buffer InitBuffer made (a LocalTensor never "
                 "allocated, or indexed outside its buffer)", write ? "writes" : "reads", ub_offset(s.ptr));
    uint32_t off = ub_offset(s.ptr) - b->offset;
    if (off + s.bytes > b->bytes)
        fail(E_OOB, api, loc, "%s %llu bytes at byte %u of %s of %u bytes (InitBuffer at line %u): %llu bytes past "
             "its end", write ? "writes" : "reads", (unsigned long long)s.bytes, off, kind_of_buffer(*b), b->bytes,
             b->init.line, (unsigned long long)(off + s.bytes - b->bytes));
    if (b->state == 0)
        fail(E_UAF, api, loc, "%s a tensor of a queue buffer (InitBuffer at line %u) after FreeTensor returned it "
             "(use after free: the buffer may already hold the next tile)", write ? "writes" : "reads", b->init.line);
}

inline void race(const char* api, Loc loc, int pipe, bool write, int other, const Access& a, bool other_wrote,
                 uint32_t off) {
    fail(E_RACE, api, loc, "%s on pipe %s %s UB byte %u, which %s on pipe %s (line %u) %s, with no synchronisation "
         "between the two pipes (EnQue/DeQue, SetFlag/WaitFlag or PipeBarrier<PIPE_ALL>): on the NPU the order is "
         "undefined", api, pipe_name(pipe), write ? "writes" : "reads", off, a.api ? a.api : "?", pipe_name(other),
         a.line, other_wrote ? "wrote" : "read");
}

// Race check and record for pipe `pipe` at clock `vc`, over the 32-byte blocks of the span.
inline void track_ub(const char* api, Loc loc, int pipe, Span s, bool write) {
    Machine& m = M();
    if (s.bytes == 0) return;
    uint32_t first = ub_offset(s.ptr) / 32, last = (uint32_t)((ub_offset(s.ptr) + s.bytes - 1) / 32);
    const VC& vc = m.vc[pipe == P_SW ? P_S : pipe];
    uint32_t ts = vc.c[pipe];
    for (uint32_t i = first; i <= last; i++) {
        UbBlock& b = m.ub_shadow[i];
        if (b.w.ts && b.wpipe != pipe && b.w.ts > vc.c[b.wpipe]) race(api, loc, pipe, write, b.wpipe, b.w, true, i * 32);
        if (write) {
            for (int q = 0; q < NPIPE; q++)
                if (q != pipe && b.r[q].ts && b.r[q].ts > vc.c[q]) race(api, loc, pipe, write, q, b.r[q], false, i * 32);
            b.wpipe = (uint8_t)pipe;
            b.w = {ts, api, loc.line};
        } else {
            b.r[pipe] = {ts, api, loc.line};
        }
    }
}

// An instruction goes to `pipe`: it follows what the scalar unit did before issuing it; it gets its own tick.
inline void issue(int pipe) {
    Machine& m = M();
    if (pipe != P_S) {
        VC scalar = m.vc[P_S];
        scalar.c[P_SW] = 0;  // the scalar's stores are not known to follow: they need a flag from S
        m.vc[pipe].join(scalar);
    }
    m.vc[pipe].c[pipe]++;
}

// A scalar access: loads on S; a store ticks the store clock and is recorded as P_SW.
inline int scalar_issue(bool write) {
    issue(P_S);
    if (!write) return P_S;
    M().vc[P_S].c[P_SW]++;
    return P_SW;
}

inline void ub_access(int pipe, const char* api, Loc loc, Span s, bool write) {
    check_ub(api, loc, s, write);
    track_ub(api, loc, pipe, s, write);
}

// One vector instruction: checks and records every span, then the caller computes.
inline void vec_issue(const char* api, Loc loc, std::initializer_list<Span> reads, std::initializer_list<Span> writes) {
    step(api, loc);
    issue(P_V);
    for (const Span& s : reads) ub_access(P_V, api, loc, s, false);
    for (const Span& s : writes) ub_access(P_V, api, loc, s, true);
}

inline void scalar_access(const char* api, Loc loc, Span s, bool write) {
    step(api, loc);
    ub_access(scalar_issue(write), api, loc, s, write);
}

// -- global memory --------------------------------------------------------------------------------------------
inline GmRegion* region_near(const uint8_t* p) {
    for (GmRegion* r : M().regions)
        if (p >= r->base - kGuard && p < r->base + r->bytes + kGuard) return r;
    return nullptr;
}

inline void* gm_alloc(uint64_t bytes, const char* what, bool poison) {
    uint64_t body = (bytes + 511) / 512 * 512;
    uint8_t* raw = (uint8_t*)aligned_alloc(512, body + 2 * kGuard);
    if (!raw) throw EmuError{E_HOST, "out of host memory for a GM buffer"};
    std::memset(raw, 0xA5, kGuard);
    std::memset(raw + kGuard + bytes, 0xA5, body + kGuard - bytes);
    if (poison) std::memset(raw + kGuard, 0xFF, bytes);
    auto* r = new GmRegion{raw + kGuard, bytes, what};
    auto& rs = M().regions;
    rs.insert(std::upper_bound(rs.begin(), rs.end(), r, [](GmRegion* a, GmRegion* b) { return a->base < b->base; }), r);
    return r->base;
}

inline void gm_release_all() {
    for (GmRegion* r : M().regions) {
        free(r->base - kGuard);
        delete r;
    }
    M().regions.clear();
}

inline const char* kind_word(bool write) { return write ? "writes" : "reads"; }

// A GM access by `pipe` of this core: bounds, then cross-core and in-core ordering.
inline void gm_access(int pipe, const char* api, Loc loc, const void* ptr, uint64_t bytes, bool write, bool atomic) {
    Machine& m = M();
    if (bytes == 0) return;
    const uint8_t* p = (const uint8_t*)ptr;
    GmRegion* r = region_near(p);
    if (!r) fail(E_OOB, api, loc, "%s %llu bytes at GM address %p, which is in no buffer the host passed (a wild "
                 "address)", kind_word(write), (unsigned long long)bytes, ptr);
    // A read may run into the 32-byte block the buffer ends in (device allocations are whole blocks and more; the
    // bytes past the end are garbage: the guard's); a write past the end is out of bounds.
    uint64_t readable = write ? r->bytes : (r->bytes + 31) / 32 * 32;
    if (p < r->base || p + bytes > r->base + readable) {
        long long first = (long long)(p - r->base);
        fail(E_OOB, api, loc, "%s %llu bytes at byte %lld of %s, which has %llu bytes: %s", kind_word(write),
             (unsigned long long)bytes, first, r->what.c_str(), (unsigned long long)r->bytes,
             first < 0 ? "before its start" : "past its end");
    }
    if (r->launch != m.launch) {
        r->launch = m.launch;
        r->wcore.assign(r->bytes, -1);
        r->rcore.assign(r->bytes, -1);
        r->blocks.assign((r->bytes + 31) / 32, {});
    }
    uint64_t off = p - r->base;
    int16_t me = (int16_t)m.block_idx;
    uint64_t end = std::min(off + bytes, r->bytes);
    for (uint64_t i = off; i < end; i++) {
        int16_t w = r->wcore[i], rd = r->rcore[i];
        bool w_atomic = w >= 0 && (w & 0x4000);
        int16_t wc = w >= 0 ? (int16_t)(w & 0x3fff) : w;
        if (wc >= 0 && wc != me && !(write && atomic && w_atomic))
            fail(E_RACE, api, loc, "%s byte %llu of %s, which core %d wrote in the same launch: cores run "
                 "concurrently and nothing orders them", kind_word(write), (unsigned long long)i, r->what.c_str(), wc);
        if (write && rd != -1 && rd != me)
            fail(E_RACE, api, loc, "writes byte %llu of %s, which %s read in the same launch: cores run "
                 "concurrently and nothing orders them", (unsigned long long)i, r->what.c_str(),
                 rd == -2 ? "other cores" : "another core");
        if (write) r->wcore[i] = (int16_t)(me | (atomic ? 0x4000 : 0));
        else r->rcore[i] = rd == -1 || rd == me ? me : -2;
    }
    uint64_t run = m.launch << 16 | m.block_idx;
    const VC& vc = m.vc[pipe == P_SW ? P_S : pipe];
    for (uint64_t b = off / 32; b <= (off + bytes - 1) / 32 && b < r->blocks.size(); b++) {
        GmRegion::Block& e = r->blocks[b];
        if (e.core != run) e = GmRegion::Block{run};
        if (e.w.ts && e.wpipe != pipe && e.w.ts > vc.c[e.wpipe] && !(write && atomic))
            fail(E_RACE, api, loc, "%s on pipe %s %s byte %llu of %s, which %s on pipe %s (line %u) wrote, with no "
                 "synchronisation between the two pipes", api, pipe_name(pipe), kind_word(write),
                 (unsigned long long)(b * 32), r->what.c_str(), e.w.api, pipe_name(e.wpipe), e.w.line);
        if (write) {
            for (int q = 0; q < NPIPE; q++)
                if (q != pipe && e.r[q].ts && e.r[q].ts > vc.c[q])
                    fail(E_RACE, api, loc, "%s on pipe %s writes byte %llu of %s, which %s on pipe %s (line %u) "
                         "read, with no synchronisation between the two pipes", api, pipe_name(pipe),
                         (unsigned long long)(b * 32), r->what.c_str(), e.r[q].api, pipe_name(q), e.r[q].line);
            e.wpipe = (uint8_t)pipe;
            e.w = {vc.c[pipe], api, loc.line};
        } else {
            e.r[pipe] = {vc.c[pipe], api, loc.line};
        }
    }
}

// -- flags ----------------------------------------------------------------------------------------------------
inline uint64_t flag_key(int src, int dst, uint32_t event) { return (uint64_t)src << 40 | (uint64_t)dst << 32 | event; }

inline void set_flag(int src, int dst, uint32_t event) {
    issue(src);
    M().flags[flag_key(src, dst, event)].push_back(M().vc[src]);
}

inline void wait_flag(int src, int dst, uint32_t event, const char* api, Loc loc) {
    auto& q = M().flags[flag_key(src, dst, event)];
    if (q.empty())
        fail(E_DEADLOCK, api, loc, "waits on event %u from pipe %s to pipe %s, which no SetFlag before it set: the "
             "pipe would wait forever", event, pipe_name(src), pipe_name(dst));
    issue(dst);
    M().vc[dst].join(q.front());
    q.pop_front();
}

inline void barrier_all() {  // PipeBarrier<PIPE_ALL>: every pipe waits for every other
    Machine& m = M();
    VC all;
    for (int p = 0; p < NPIPE; p++) all.join(m.vc[p]);
    for (int p = 0; p < NPIPE; p++) m.vc[p].join(all);
}

// -- launches -------------------------------------------------------------------------------------------------
inline void configure(int schedule, uint64_t seed) {
    M().schedule = schedule;
    M().seed = seed;
}

inline const Target& target() { return *M().target; }

inline void start_core(uint32_t idx) {
    Machine& m = M();
    m.block_idx = idx;
    if (m.ub_size != m.target->ub_bytes) {
        free(m.ub);
        m.ub = (uint8_t*)aligned_alloc(4096, m.target->ub_bytes);
        m.ub_size = m.target->ub_bytes;
    }
    std::memset(m.ub, 0xFF, m.ub_size);
    m.ub_used = 0;
    m.ub_shadow.assign(m.target->ub_bytes / 32, UbBlock{});
    for (VC& v : m.vc) v = VC{};
    m.buffers.clear();
    m.flags.clear();
    m.atomic_add = false;
    m.next_event = 0;
}

inline std::vector<uint32_t> core_order(uint32_t n) {
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; i++) order[i] = i;
    Machine& m = M();
    if (m.schedule == 1) std::reverse(order.begin(), order.end());
    else if (m.schedule >= 2) std::shuffle(order.begin(), order.end(), std::mt19937_64(m.seed * 7919 + m.schedule));
    return order;
}

template <class F>
void launch(const char* kernel, uint32_t blockDim, F&& body, Loc loc = Loc::here()) {
    Machine& m = M();
    m.kernel = kernel;
    m.block_idx = 0;
    m.block_num = blockDim;
    if (blockDim == 0 || blockDim > 65535)
        fail(E_BADARG, "launch", loc, "blockDim %u: a launch needs 1 to 65535 blocks", blockDim);
    m.launch++;
    for (uint32_t idx : core_order(blockDim)) {
        start_core(idx);
        body();
    }
}

inline void begin_call() {
    clock_gettime(CLOCK_MONOTONIC, &M().started);
    M().steps = 0;
    M().any_atomic = false;
}

}  // namespace opforge_asc
