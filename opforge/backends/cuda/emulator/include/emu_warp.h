// opforge CUDA emulator: warp collectives with exact mask semantics over 32-lane warps. A lane
// waits until every lane named in the mask waits at the same kind of collective with the same
// mask; a named lane that exited, does not exist or waits elsewhere leaves it waiting, and the
// scheduler reports the deadlock. Reading a lane outside the mask is undefined in CUDA: an error.
#pragma once
#include "emu_sched.h"

namespace opforge_emu {
OPF_NOSAN static int source_lane(const Thread& t) {
    int lane = t.lin & 31, w = t.width, seg = lane & ~(w - 1), last = seg + w - 1;
    long long b = t.arg, j;
    switch (t.kind) {
        case K_SHFL: j = seg + (b & (w - 1)); break;
        case K_SHFL_UP: j = lane - b; return j >= seg ? (int)j : lane;
        case K_SHFL_DOWN: j = lane + b; break;
        default: j = lane ^ b; break;
    }
    return j <= last ? (int)j : lane;
}

OPF_NOSAN static uint64_t reduce_lanes(Thread* lanes[], int count, long long op) {
    uint64_t acc = lanes[0]->val;
    for (int i = 1; i < count; ++i) {
        uint64_t v = lanes[i]->val;
        int sv = (int)(uint32_t)v, sa = (int)(uint32_t)acc;
        switch (op) {
            case 0: acc = (uint32_t)(acc + v); break;
            case 1: acc = (uint32_t)((uint32_t)v < (uint32_t)acc ? v : acc); break;
            case 2: acc = (uint32_t)((uint32_t)v > (uint32_t)acc ? v : acc); break;
            case 3: acc = (uint32_t)(sv < sa ? v : acc); break;
            case 4: acc = (uint32_t)(sv > sa ? v : acc); break;
            case 5: acc &= v; break;
            case 6: acc |= v; break;
            default: acc ^= v; break;
        }
    }
    return acc;
}

OPF_NOSAN static void compute_collective(Thread* lanes[], int count, int base) {
    Thread& t0 = *lanes[0];
    unsigned bits = 0;
    for (int i = 0; i < count; ++i) bits |= (lanes[i]->val != 0) << (lanes[i]->lin & 31);
    uint64_t red = t0.kind == K_REDUCE ? reduce_lanes(lanes, count, t0.arg) : 0;
    for (int i = 0; i < count; ++i) {
        Thread& t = *lanes[i];
        if (t.kind >= K_SHFL && t.kind <= K_SHFL_XOR) {
            int j = source_lane(t);
            if (!(t.mask >> j & 1)) {
                char msg[320];
                snprintf(msg, sizeof msg, "undefined: %s (line %d): thread %d reads lane %d, which is not in the mask 0x%08x (%s)",
                         kKindNames[t.kind], t.line, t.lin, j, t.mask, where());
                fail(E_UNDEFINED, msg);
            }
            t.res = E.threads[base + j].val;
        } else if (t.kind == K_BALLOT) {
            t.res = bits;
        } else if (t.kind == K_ANY || t.kind == K_ALL) {
            t.res = t.kind == K_ANY ? bits != 0 : bits == t.mask;
        } else {
            t.res = red;
        }
    }
}

OPF_NOSAN static bool try_complete(Thread* t) {
    int base = t->lin & ~31, count = 0;
    if (E.warp_waiting[base / 32] < __builtin_popcount(t->mask)) return false;  // not all there yet
    Thread* lanes[32];
    for (int l = 0; l < 32; ++l) {
        if (!(t->mask >> l & 1)) continue;
        if (base + l >= E.n) return false;
        Thread* o = &E.threads[base + l];
        if (o->state != T_WARP || o->kind != t->kind || o->mask != t->mask) return false;
        lanes[count++] = o;
    }
    compute_collective(lanes, count, base);
    warp_sync(lanes, count);
    for (int i = 0; i < count; ++i) lanes[i]->state = T_READY;
    E.warp_waiting[base / 32] -= count;
    t->state = T_RUN;
    return true;
}

OPF_NOSAN static uint64_t collective(int kind, int line, unsigned mask, uint64_t val, long long arg, int width) {
    Thread* t = E.cur;
    char msg[320];
    if (!t) {
        format_error(E_UNDEFINED, "undefined: %s (line %d) called outside a kernel", kKindNames[kind], line);
        return 0;
    }
    if (!(mask >> (t->lin & 31) & 1)) {
        snprintf(msg, sizeof msg, "undefined: %s (line %d): thread %d is not in its own mask 0x%08x (%s)",
                 kKindNames[kind], line, t->lin, mask, where());
        fail(E_UNDEFINED, msg);
    }
    if (width < 1 || width > 32 || (width & (width - 1))) {
        snprintf(msg, sizeof msg, "undefined: %s (line %d): width %d is not a power of 2 up to 32", kKindNames[kind], line, width);
        fail(E_UNDEFINED, msg);
    }
    if (t->npending) check_pending(t);
    t->state = T_WARP;
    t->kind = kind;
    t->line = line;
    t->mask = mask;
    t->val = val;
    t->arg = arg;
    t->width = width;
    E.warp_waiting[t->lin / 32]++;
    if (!try_complete(t)) yield_thread();
    t->state = T_RUN;
    return t->res;
}

// __activemask: the lanes of the warp that reach the same __activemask while no other lane of the
// warp can still run (they exited or wait elsewhere), which is what a converged warp would see.
OPF_NOSAN static bool resolve_activemask() {
    bool any = false;
    for (int base = 0; base < E.n; base += 32) {
        int end = base + 32 < E.n ? base + 32 : E.n;
        bool ready = false, waiting = false;
        for (int i = base; i < end; ++i) {
            ready |= E.threads[i].state == T_READY;
            waiting |= E.threads[i].state == T_WARP && E.threads[i].kind == K_ACTIVEMASK;
        }
        if (ready || !waiting) continue;
        for (int i = base; i < end; ++i) {  // first every waiter's mask, then release them
            Thread& t = E.threads[i];
            if (t.state != T_WARP || t.kind != K_ACTIVEMASK) continue;
            unsigned mask = 0;
            for (int k = base; k < end; ++k)
                if (E.threads[k].state == T_WARP && E.threads[k].kind == K_ACTIVEMASK && E.threads[k].line == t.line)
                    mask |= 1u << (k - base);
            t.res = mask;
        }
        for (int i = base; i < end; ++i) {
            Thread& t = E.threads[i];
            if (t.state != T_WARP || t.kind != K_ACTIVEMASK) continue;
            t.state = T_READY;
            E.activemask_waiters--;
            E.warp_waiting[base / 32]--;
        }
        any = true;
    }
    return any;
}

OPF_NOSAN static unsigned activemask(int line) {
    Thread* t = E.cur;
    if (!t) return 0;
    if (t->npending) check_pending(t);
    t->state = T_WARP;
    t->kind = K_ACTIVEMASK;
    t->line = line;
    E.activemask_waiters++;
    E.warp_waiting[t->lin / 32]++;
    yield_thread();
    t->state = T_RUN;
    return (unsigned)t->res;
}

template <class T> OPF_NOSAN static inline uint64_t to_bits(T v) {
    static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T> OPF_NOSAN static inline T from_bits(uint64_t b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}
template <class T> OPF_NOSAN static inline T shfl(int line, int kind, unsigned mask, T var, long long arg, int width = 32) {
    return from_bits<T>(collective(kind, line, mask, to_bits(var), arg, width));
}
// __syncwarp() and __syncwarp(mask): a callable holding the line, so no empty-__VA_ARGS__ comma.
struct SyncWarp {
    int line;
    void operator()(unsigned mask = 0xffffffffu) const { collective(K_SYNCWARP, line, mask, 0, 0, 32); }
};
OPF_NOSAN static inline unsigned vote(int line, int kind, unsigned mask, int pred) {
    return (unsigned)collective(kind, line, mask, pred != 0, 0, 32);
}
template <class T> OPF_NOSAN static inline T reduce(int line, int op, unsigned mask, T value) {
    static_assert(sizeof(T) == 4, "__reduce_*_sync takes int or unsigned");
    return from_bits<T>(collective(K_REDUCE, line, mask, to_bits(value), op, 32));
}
}  // namespace opforge_emu

// __COUNTER__ names each __syncthreads call site: threads meeting at two different ones diverged.
#define __syncthreads() ::opforge_emu::barrier(__LINE__, __COUNTER__, 1, 0)
#define __syncthreads_count(p) ::opforge_emu::barrier(__LINE__, __COUNTER__, (p), 1)
#define __syncthreads_and(p) ::opforge_emu::barrier(__LINE__, __COUNTER__, (p), 2)
#define __syncthreads_or(p) ::opforge_emu::barrier(__LINE__, __COUNTER__, (p), 3)
#define __syncwarp(...) ::opforge_emu::SyncWarp{__LINE__}(__VA_ARGS__)
#define __shfl_sync(...) ::opforge_emu::shfl(__LINE__, ::opforge_emu::K_SHFL, __VA_ARGS__)
#define __shfl_up_sync(...) ::opforge_emu::shfl(__LINE__, ::opforge_emu::K_SHFL_UP, __VA_ARGS__)
#define __shfl_down_sync(...) ::opforge_emu::shfl(__LINE__, ::opforge_emu::K_SHFL_DOWN, __VA_ARGS__)
#define __shfl_xor_sync(...) ::opforge_emu::shfl(__LINE__, ::opforge_emu::K_SHFL_XOR, __VA_ARGS__)
#define __ballot_sync(m, p) ::opforge_emu::vote(__LINE__, ::opforge_emu::K_BALLOT, (m), (p))
#define __any_sync(m, p) ((int)::opforge_emu::vote(__LINE__, ::opforge_emu::K_ANY, (m), (p)))
#define __all_sync(m, p) ((int)::opforge_emu::vote(__LINE__, ::opforge_emu::K_ALL, (m), (p)))
#define __activemask() ::opforge_emu::activemask(__LINE__)
#define __reduce_add_sync(m, v) ::opforge_emu::reduce(__LINE__, 0, (m), (v))
#define __reduce_min_sync(m, v) ::opforge_emu::reduce(__LINE__, ::opforge_emu::is_signed_(v) ? 3 : 1, (m), (v))
#define __reduce_max_sync(m, v) ::opforge_emu::reduce(__LINE__, ::opforge_emu::is_signed_(v) ? 4 : 2, (m), (v))
#define __reduce_and_sync(m, v) ::opforge_emu::reduce(__LINE__, 5, (m), (v))
#define __reduce_or_sync(m, v) ::opforge_emu::reduce(__LINE__, 6, (m), (v))
#define __reduce_xor_sync(m, v) ::opforge_emu::reduce(__LINE__, 7, (m), (v))
namespace opforge_emu {
OPF_NOSAN static inline bool is_signed_(int) { return true; }
OPF_NOSAN static inline bool is_signed_(unsigned) { return false; }
}  // namespace opforge_emu
