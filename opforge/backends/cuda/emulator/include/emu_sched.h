// opforge CUDA emulator: the block scheduler. A block's threads run one at a time in the
// schedule's order (forward, reverse, a seeded shuffle, or warps ahead: one warp at a time), each
// until it waits at a barrier or a warp collective or exits; sweeps repeat until every thread has exited. A sweep in which no
// thread can run is a deadlock, reported with who waits where.
#pragma once
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include "emu_fiber.h"

static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;

namespace opforge_emu {
enum State { T_NEW, T_READY, T_RUN, T_SYNC, T_WARP, T_EXITED };
enum Code { E_OK, E_DEADLOCK, E_STEP_LIMIT, E_TRAP, E_LAUNCH, E_UNDEFINED, E_CRASH, E_OOB, E_POINTER, E_RACE,
            E_MISALIGNED };
enum Kind { K_SYNCWARP, K_SHFL, K_SHFL_UP, K_SHFL_DOWN, K_SHFL_XOR, K_BALLOT, K_ANY, K_ALL,
            K_ACTIVEMASK, K_REDUCE };
static const char* const kKindNames[] = {"__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                         "__shfl_xor_sync", "__ballot_sync", "__any_sync", "__all_sync",
                                         "__activemask", "__reduce_*_sync"};
static const int kMaxThreads = 1024;
// Blocks alive at once (the running one and those suspended while they spin, emu_launch.h): at most
// kMaxResident, and at most kMaxFibers threads in all (a fiber, with its stack, each).
static const int kMaxResident = 64;
static const int kMaxFibers = 4096;
static const int kWarpsAhead = 3;  // the schedule number of sweep_warps_ahead (0 forward, 1 reverse, else shuffles)

// The memory model's per-thread state (emu_mem.h): what it knows of other blocks, what its last
// fence released, and writes whose race verdict waits for the stored bytes.
struct KEntry;
struct Clock { KEntry* e; uint32_t n, cap; };
struct Pending { uintptr_t word; void* pc; uint32_t before, other; uint8_t mask; int theirs, flags; };

struct Thread {
    uint3 idx;
    int lin, state, kind, line, width;
    unsigned mask;
    long long arg;
    uint64_t val, res;
    Fiber* fiber;
    uint32_t vc[32];   // clocks of the lanes of its warp, as far as this thread has synchronised with them
    uintptr_t spin_addr;  // a spin on memory: the address its last strong reads read, the value, how often
    uint64_t spin_val;
    int spin_count;
    uint32_t epoch;    // its current epoch (emu_mem.h), 0 after a synchronisation event
    Clock know, rel;
    bool released;
    int npending;
    Pending pending[8];
};
OPF_NOSAN static void barrier_sync(Thread* threads, int n);
OPF_NOSAN static void warp_sync(Thread** lanes, int count);
OPF_NOSAN static void check_pending(Thread* t);
OPF_NOSAN static void reset_thread(Thread* t);
OPF_NOSAN static void block_begin(unsigned long long block);
static int g_call_depth = 0;  // kernel call depth (the instrumentation's function entry and exit)

struct Emu {
    Thread threads[kMaxThreads];
    int order[kMaxThreads];
    int n, pos, live, arrived, pred_count, sync_result, sync_arrivals, activemask_waiters;
    int warp_waiting[kMaxThreads / 32];  // lanes of each warp waiting at a collective
    Fiber* fibers[kMaxFibers];
    int nfibers;
    Fiber* free_list;
    bool fibers_dirty;
    Context sched;
    Fiber* cur_fiber;
    Thread* cur;
    void (*body)(void*);
    void* arg;
    int err_code, last_error, schedule;
    bool in_launch;
    bool released;  // a __syncthreads barrier opened since the warps-ahead sweep last looked
    bool sweep_progress;  // a thread of the current sweep ran (continue_block)
    bool suspend;         // the running thread spins on memory: switch to another block
    bool can_suspend;     // another block is there to run (emu_launch.h run_blocks)
    char err[1024];
    unsigned long long seed;
    double time_limit;
    const char* kernel;
    int launch_line;
};
static Emu E;

OPF_NOSAN static void set_current(Thread* t) { E.cur = t; threadIdx = t->idx; }

OPF_NOSAN static void format_error(int code, const char* fmt, ...) {
    if (E.err_code) return;
    E.err_code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(E.err, sizeof E.err, fmt, ap);
    va_end(ap);
}

// Where the error happened, for messages: "kernel k (launched at line 12), block (3,0,0), thread 17".
// A static buffer, no allocation: the signal handlers call it too.
OPF_NOSAN static const char* where() {
    static char buf[256];
    int n = snprintf(buf, sizeof buf, "kernel %s (launched at line %d), block (%u,%u,%u)", E.kernel ? E.kernel : "?",
                     E.launch_line, blockIdx.x, blockIdx.y, blockIdx.z);
    if (E.cur) snprintf(buf + n, sizeof buf - n, ", thread (%u,%u,%u)", E.cur->idx.x, E.cur->idx.y, E.cur->idx.z);
    return buf;
}

// Stop the launch: the fiber is abandoned (the pool is rebuilt before the next launch).
[[noreturn]] OPF_NOSAN static void abort_thread() {
    E.fibers_dirty = true;
    switch_to(&E.cur_fiber->ctx, &E.sched);
    std::abort();  // never resumed
}

OPF_NOSAN static void fail(int code, const char* msg) {
    format_error(code, "%s", msg);
    if (E.cur_fiber) abort_thread();
}

OPF_NOSAN static void fiber_main();

OPF_NOSAN static Fiber* take_fiber() {
    if (Fiber* f = E.free_list) {
        E.free_list = f->next_free;
        return f;
    }
    Fiber* f = new Fiber();
    f->stack = new_stack();
    init_context(f, fiber_main);
    E.fibers[E.nfibers++] = f;
    return f;
}

OPF_NOSAN static void reset_fibers() {
    E.free_list = nullptr;
    for (int i = E.nfibers - 1; i >= 0; --i) {
        init_context(E.fibers[i], fiber_main);
        E.fibers[i]->next_free = E.free_list;
        E.free_list = E.fibers[i];
    }
    E.fibers_dirty = false;
}

OPF_NOSAN static void resume(Fiber* f) {
    E.cur_fiber = f;
    f->thread->state = T_RUN;
    set_current(f->thread);
    switch_to(&E.sched, &f->ctx);
    E.cur_fiber = nullptr;
    E.cur = nullptr;
}

OPF_NOSAN static void yield_thread() { switch_to(&E.cur_fiber->ctx, &E.sched); }

OPF_NOSAN static void report_divergent_barrier();

// Every waiting thread must be at the same __syncthreads: in CUDA, barriers at different call
// sites in divergent code are undefined (they hang or pass at random on a GPU).
OPF_NOSAN static bool barrier_sites_agree() {
    long long site = -1;
    for (int i = 0; i < E.n; ++i) {
        const Thread& t = E.threads[i];
        if (t.state != T_SYNC) continue;
        if (site >= 0 && t.arg != site) return false;
        site = t.arg;
    }
    return true;
}

OPF_NOSAN static void release_barrier() {
    if (!barrier_sites_agree()) {
        report_divergent_barrier();
        if (E.cur_fiber) abort_thread();
        return;
    }
    barrier_sync(E.threads, E.n);
    E.sync_result = E.pred_count;
    E.sync_arrivals = E.arrived;
    E.pred_count = E.arrived = 0;
    for (int i = 0; i < E.n; ++i)
        if (E.threads[i].state == T_SYNC) E.threads[i].state = T_READY;
    E.released = true;
}

// __syncthreads and its _count/_and/_or forms; threads that exited count as arrived.
OPF_NOSAN static int barrier(int line, int site, int pred, int op) {
    Thread* t = E.cur;
    if (!t) { format_error(E_UNDEFINED, "undefined: __syncthreads (line %d) called outside a kernel", line); return 0; }
    if (t->npending) check_pending(t);
    if (E.err_code) abort_thread();
    t->state = T_SYNC;
    t->line = line;
    t->arg = site;
    E.arrived++;
    E.pred_count += pred != 0;
    if (E.arrived == E.live) release_barrier();
    // Warps ahead: the releasing thread waits too, so the sweep restarts from the last warp.
    if (E.arrived || E.schedule == kWarpsAhead) yield_thread();
    t->state = T_RUN;
    if (op == 1) return E.sync_result;
    if (op == 2) return E.sync_result == E.sync_arrivals;
    return op == 3 ? E.sync_result > 0 : 0;
}

// A finished thread's fiber runs the next unstarted thread of the sweep, or returns to the pool.
OPF_NOSAN static void thread_exit(Fiber* f) {
    if (f->thread->npending) check_pending(f->thread);
    f->thread->state = T_EXITED;
    E.live--;
    if (E.arrived && E.arrived == E.live) release_barrier();
    int next = E.pos + 1;
    if (next < E.n && E.threads[E.order[next]].state == T_NEW) {
        E.pos = next;
        Thread* t = &E.threads[E.order[next]];
        f->thread = t;
        t->fiber = f;
        t->state = T_RUN;
        set_current(t);
        return;
    }
    f->thread = nullptr;
    f->next_free = E.free_list;
    E.free_list = f;
    switch_to(&f->ctx, &E.sched);
}

OPF_NOSAN static void fiber_main() {
    Fiber* f = E.cur_fiber;
    for (;;) {
        E.body(E.arg);
        thread_exit(f);
    }
}

OPF_NOSAN static unsigned long long splitmix(unsigned long long& s) {
    unsigned long long z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

OPF_NOSAN static void build_order(unsigned long long block) {
    for (int i = 0; i < E.n; ++i) E.order[i] = E.schedule == 1 ? E.n - 1 - i : i;
    if (E.schedule < 2 || E.schedule == kWarpsAhead) return;
    unsigned long long s = E.seed * 1000003ull + E.schedule * 7919ull + block;
    for (int i = E.n - 1; i > 0; --i) {
        int j = (int)(splitmix(s) % (unsigned long long)(i + 1));
        int tmp = E.order[i]; E.order[i] = E.order[j]; E.order[j] = tmp;
    }
}

OPF_NOSAN static void init_block(unsigned long long block) {
    unsigned bx = blockDim.x, by = blockDim.y;
    for (int i = 0; i < E.n; ++i) {
        Thread& t = E.threads[i];
        t.idx = uint3{i % bx, (i / bx) % by, i / (bx * by)};
        t.lin = i;
        t.state = T_NEW;
        t.fiber = nullptr;
        reset_thread(&t);
    }
    block_begin(block);
    E.live = E.n;
    E.arrived = E.pred_count = E.activemask_waiters = 0;
    E.released = E.sweep_progress = E.suspend = false;
    E.pos = 0;
    std::memset(E.warp_waiting, 0, sizeof E.warp_waiting);
    build_order(block);
}

OPF_NOSAN static bool resolve_activemask();
OPF_NOSAN static void report_deadlock();

// Run the thread at order position E.pos (starting it if new); false when it cannot run now.
OPF_NOSAN static bool step_thread() {
    Thread* t = &E.threads[E.order[E.pos]];
    if (t->state == T_NEW) {
        Fiber* f = take_fiber();
        f->thread = t;
        t->fiber = f;
    } else if (t->state != T_READY) {
        return false;
    }
    resume(t->fiber);
    return true;
}

// The warps-ahead schedule: one warp at a time, last warp first, each run for as long as any of
// its lanes can (through its own shuffles and votes) before the next warp starts. A warp then
// races a whole phase ahead of the others, which is what exposes a missing barrier before a
// shared buffer is reused (no thread-order sweep lets one warp write it again before the others read).
OPF_NOSAN static int sweep_warps_ahead() {
    int progress = 0, warps = (E.n + 31) / 32;
    for (int w = warps - 1; w >= 0; --w) {
        int end = w * 32 + 32 < E.n ? w * 32 + 32 : E.n;
        for (bool ran = true; ran;) {
            ran = false;
            for (E.pos = w * 32; E.pos < end; ++E.pos) {
                if (!step_thread()) continue;
                ran = true;
                progress = 1;
                if (E.err_code) return -1;
                if (E.suspend) return progress;
                if (E.released) {  // a barrier opened: the last warp runs ahead again
                    E.released = false;
                    return progress;
                }
            }
        }
    }
    return progress;
}

// Run the current block until it is done (B_DONE), fails (B_FAILED), or one of its threads spins on
// memory another block must change (B_SUSPENDED: emu_mem.h's preempt_point), resumable from where
// it stopped: the sweep position and its progress are the block's state.
enum { B_FAILED = 0, B_DONE = 1, B_SUSPENDED = 2 };
OPF_NOSAN static int continue_block() {
    while (E.schedule == kWarpsAhead) {
        int progress = sweep_warps_ahead();
        if (progress < 0) return B_FAILED;
        if (E.suspend) { E.suspend = false; return B_SUSPENDED; }
        if (E.live == 0) return B_DONE;
        if (E.activemask_waiters && resolve_activemask()) continue;
        if (!progress) { report_deadlock(); return B_FAILED; }
    }
    for (;;) {
        for (; E.pos < E.n; ++E.pos) {
            if (!step_thread()) continue;
            E.sweep_progress = true;
            if (E.err_code) return B_FAILED;
            if (E.suspend) {  // the spinning thread is T_READY: this sweep goes on with it later
                E.suspend = false;
                return B_SUSPENDED;
            }
        }
        bool progress = E.sweep_progress;
        E.pos = 0;
        E.sweep_progress = false;
        if (E.live == 0) return B_DONE;
        if (E.activemask_waiters && resolve_activemask()) continue;
        if (!progress) { report_deadlock(); return B_FAILED; }
    }
}
}  // namespace opforge_emu
