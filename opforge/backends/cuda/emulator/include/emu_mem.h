// opforge CUDA emulator: the memory model. Kernel code is compiled with GCC's thread-sanitizer
// instrumentation (-fsanitize=thread), which calls a hook before every load and store it cannot
// prove thread-private; this header is that runtime (no libtsan is linked). A hook that hits device
// memory (a launcher buffer, a cudaMalloc block, a __device__ variable) or shared memory:
// - faults an access of an aligned type (float4, double, int2...) at an address its size does not
//   divide, as the GPU does ("misaligned address"), and an access in the guard zone around a buffer;
// - feeds a happens-before race detector, like compute-sanitizer's racecheck but over every thread of
//   the grid: two accesses to the same bytes, one a write, at least one not atomic, from threads with
//   no happens-before between them, are a race when the bytes could differ.
// Happens-before, after CUDA's memory model (PTX ISA "Memory Consistency Model"):
// - program order; __syncthreads orders a block's threads (its barrier intervals); a warp collective
//   (__syncwarp, shuffles, votes) orders the lanes of its mask;
// - across blocks, only through memory: a fence (__threadfence) then an atomic or volatile write is a
//   release, an atomic or volatile read of what it wrote an acquire. Without the fence the write
//   releases nothing (a plain flag, or a counter bumped without __threadfence, publishes nothing);
//   __threadfence_block releases to its own block only (and intra-block sync through memory is not
//   modelled: such kernels are reported, never passed on a guess);
// - every launch is ordered after the previous one.
// A data-race-free kernel behaves as under sequential consistency, which the emulator runs: so
// reporting every race makes the run's values ones a GPU could produce (the DRF-SC guarantee), and
// no store buffer has to be simulated.
// Shadow state: one cell per 4 bytes of tracked memory (its last write and two reads as epochs: a
// thread between two synchronisation events), epochs in a table, per-thread clocks of the lanes of
// its warp, and per-thread/per-block knowledge of other blocks' epochs (Clock). Sub-word accesses
// share a cell with byte masks: two threads writing different bytes of one word are not a race, at
// the cost of keeping only the last writer of a word.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include "emu_sched.h"

#ifndef OPF_NOSAN
#define OPF_NOSAN __attribute__((no_sanitize_thread))
#endif
#define OPF_HOOK extern "C" __attribute__((no_sanitize_thread, visibility("hidden")))

namespace opforge_emu {
enum { A_READ = 1, A_WRITE = 2, A_STRONG = 4, A_ALIGNED = 8 };

struct EpochRec { uint32_t block; uint16_t tid; uint16_t pad; uint32_t interval; uint32_t clock; };
struct Cell { uint32_t w, r1, r2, prior; uint8_t wm, r1m, r2m, fl; };  // fl: 1 w strong, 2 r1, 4 r2

// Knowledge of one other block: every access of its intervals before g, and in interval g the
// accesses of the listed threads up to the listed clocks.
struct KEntry { uint32_t block, g, n, cap; uint32_t* tc; };  // Clock: emu_sched.h

struct Region {
    uintptr_t lo, hi;
    int kind;      // 0 global (a launcher buffer: index in buf), 1 cudaMalloc/__device__, 2 shared, 3 a
                   // launcher buffer every parameter takes as const (no write can race on it: a write
                   // there fails the call as const-write), so only bounds and alignment are checked;
                   // 4 a variable of static storage (__device__): no guard zone, its neighbours are variables
    int buf;
    Cell* shadow;
    size_t shadow_bytes;
};
static const int kMaxRegions = 640;

struct Mem {
    Region regions[kMaxRegions];
    int nregions;
    int last;
    EpochRec* epochs;
    uint32_t nepochs, cap, base;  // epochs below base belong to earlier launches: ordered before all
    uint32_t interval;            // the running block's barrier interval
    uint32_t block;               // the running block's linear index
    Clock bk;                     // what the running block as a whole knows of other blocks
    bool races;                   // this schedule runs the race detector (detects())
    // release clocks of synchronisation locations (atomics, volatile accesses): open addressing
    uintptr_t* sync_keys;
    Clock* sync_clocks;
    uint32_t sync_cap, sync_n;
    bool enabled;
};
static Mem M;

OPF_NOSAN static void* shadow_map(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

// -- regions -------------------------------------------------------------------------------------
OPF_NOSAN static void forget_pages();
OPF_NOSAN static void drop_region(int i) {
    if (M.regions[i].shadow) munmap(M.regions[i].shadow, M.regions[i].shadow_bytes);
    M.regions[i] = M.regions[--M.nregions];
    M.last = 0;
    forget_pages();
}
OPF_NOSAN static void track(const void* p, size_t n, int kind, int buf) {
    uintptr_t lo = (uintptr_t)p, hi = lo + n;
    for (int i = 0; i < M.nregions; ++i) {
        Region& r = M.regions[i];
        if (r.lo == lo && r.hi == hi && r.kind == kind) { r.buf = buf; return; }
    }
    for (int i = M.nregions - 1; i >= 0; --i)  // a region the new one overlaps is gone (freed, reused)
        if (M.regions[i].lo < hi && lo < M.regions[i].hi) drop_region(i);
    if (M.nregions == kMaxRegions || n == 0) return;
    M.regions[M.nregions++] = Region{lo, hi, kind, buf, nullptr, 0};
    forget_pages();
}
OPF_NOSAN static void untrack(const void* p) {
    for (int i = 0; i < M.nregions; ++i)
        if (M.regions[i].lo == (uintptr_t)p && M.regions[i].kind == 1) { drop_region(i); return; }
}
// The launcher's buffers change from call to call: every kind-0 region not in the new list goes.
OPF_NOSAN static void untrack_buffers() {
    for (int i = M.nregions - 1; i >= 0; --i)
        if (M.regions[i].kind == 0 || M.regions[i].kind == 3) { M.regions[i].buf = -1; M.regions[i].kind = 0; }
}
OPF_NOSAN static void prune_buffers() {
    for (int i = M.nregions - 1; i >= 0; --i)
        if (M.regions[i].kind == 0 && M.regions[i].buf < 0) drop_region(i);
}
OPF_NOSAN static void mark_readonly(int buf) {
    for (int i = 0; i < M.nregions; ++i)
        if (M.regions[i].kind == 0 && M.regions[i].buf == buf) M.regions[i].kind = 3;
}

OPF_NOSAN static inline Region* find_region(uintptr_t a) {
    Region* r = &M.regions[M.last];
    if (M.nregions && a >= r->lo && a < r->hi) return r;
    for (int i = 0; i < M.nregions; ++i) {
        r = &M.regions[i];
        if (a >= r->lo && a < r->hi) { M.last = i; return r; }
    }
    return nullptr;
}

// The region `a` is in or near: device memory within its guard zone (1 KB each side, inside the
// guarded buffer's own mapping) counts as near, so an access there is out of bounds; shared memory
// has no guard zone here (the dynamic buffer's canary catches overruns).
static const uintptr_t kGuard = 1024;
OPF_NOSAN static inline uintptr_t guard_of(const Region& r) { return r.kind == 2 || r.kind == 4 ? 0 : kGuard; }
OPF_NOSAN static inline bool near(const Region* r, uintptr_t a, size_t size) {
    uintptr_t pad = guard_of(*r);
    return a + size > r->lo - pad && a < r->hi + pad;
}
// Most accesses a hook sees are not device memory (the thread's stack, the emulator's own data): a
// direct-mapped cache of 4 KB pages answers "no region near this page" (or the one region that is)
// without a scan; any change to the regions empties it.
static const int kPageCache = 4096;
static uintptr_t g_page_key[kPageCache];
static int g_page_val[kPageCache];  // -1 none near, -2 several (scan), else the region's index
OPF_NOSAN static void forget_pages() { std::memset(g_page_key, 0, sizeof g_page_key); }
OPF_NOSAN static Region* scan_near(uintptr_t a, size_t size) {
    for (int i = 0; i < M.nregions; ++i)
        if (near(&M.regions[i], a, size)) return &M.regions[i];
    return nullptr;
}
OPF_NOSAN static inline Region* find_near(uintptr_t a, size_t size) {
    uintptr_t page = (a >> 12) + 1;
    int slot = (int)(page & (kPageCache - 1));
    if (g_page_key[slot] != page) {
        uintptr_t lo = (page - 1) << 12, hi = lo + 4096;
        int found = -1;
        for (int i = 0; i < M.nregions; ++i) {
            const Region& r = M.regions[i];
            uintptr_t pad = guard_of(r);
            if (r.lo - pad < hi && r.hi + pad > lo) { found = found == -1 ? i : -2; if (found == -2) break; }
        }
        g_page_key[slot] = page;
        g_page_val[slot] = found;
    }
    int v = g_page_val[slot];
    if (v == -1 && a + size <= ((a >> 12) + 1) << 12) return nullptr;
    if (v >= 0 && a + size <= ((a >> 12) + 1) << 12) return near(&M.regions[v], a, size) ? &M.regions[v] : nullptr;
    return scan_near(a, size);  // several regions near the page, or an access across pages
}

OPF_NOSAN static Cell* cells(Region* r) {
    if (!r->shadow) {
        size_t words = (r->hi - r->lo + 3) / 4 + 1;
        r->shadow_bytes = words * sizeof(Cell);
        r->shadow = (Cell*)shadow_map(r->shadow_bytes);
        if (!r->shadow) r->shadow_bytes = 0;
    }
    return r->shadow;
}

// -- clocks --------------------------------------------------------------------------------------
OPF_NOSAN static void clock_free(Clock& c) {
    for (uint32_t i = 0; i < c.n; ++i) std::free(c.e[i].tc);
    std::free(c.e);
    c = Clock{nullptr, 0, 0};
}
OPF_NOSAN static KEntry* clock_entry(Clock& c, uint32_t block, bool create) {
    for (uint32_t i = 0; i < c.n; ++i)
        if (c.e[i].block == block) return &c.e[i];
    if (!create) return nullptr;
    if (c.n == c.cap) {
        c.cap = c.cap ? 2 * c.cap : 4;
        c.e = (KEntry*)std::realloc(c.e, c.cap * sizeof(KEntry));
    }
    c.e[c.n] = KEntry{block, 0, 0, 0, nullptr};
    return &c.e[c.n++];
}
OPF_NOSAN static void entry_note(KEntry* k, uint32_t tid, uint32_t clock) {
    for (uint32_t i = 0; i < k->n; ++i)
        if (k->tc[2 * i] == tid) { if (k->tc[2 * i + 1] < clock) k->tc[2 * i + 1] = clock; return; }
    if (k->n == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 4;
        k->tc = (uint32_t*)std::realloc(k->tc, 2 * k->cap * sizeof(uint32_t));
    }
    k->tc[2 * k->n] = tid;
    k->tc[2 * k->n + 1] = clock;
    k->n++;
}
OPF_NOSAN static void entry_join(KEntry* dst, const KEntry& src) {
    if (src.g < dst->g) return;
    if (src.g > dst->g) { dst->g = src.g; dst->n = 0; }
    for (uint32_t i = 0; i < src.n; ++i) entry_note(dst, src.tc[2 * i], src.tc[2 * i + 1]);
}
OPF_NOSAN static void clock_join(Clock& dst, const Clock& src) {
    for (uint32_t i = 0; i < src.n; ++i) entry_join(clock_entry(dst, src.e[i].block, true), src.e[i]);
}
OPF_NOSAN static bool clock_covers(const Clock& c, const EpochRec& p) {
    for (uint32_t i = 0; i < c.n; ++i) {
        const KEntry& k = c.e[i];
        if (k.block != p.block) continue;
        if (p.interval < k.g) return true;
        if (p.interval > k.g) return false;
        for (uint32_t j = 0; j < k.n; ++j)
            if (k.tc[2 * j] == p.tid) return k.tc[2 * j + 1] >= p.clock;
        return false;
    }
    return false;
}

OPF_NOSAN static Clock* sync_clock(uintptr_t key, bool create) {
    if (M.sync_n * 2 >= M.sync_cap) {
        if (!create) {
            if (!M.sync_cap) return nullptr;
        } else {
            uint32_t old_cap = M.sync_cap;
            uintptr_t* old_keys = M.sync_keys;
            Clock* old_clocks = M.sync_clocks;
            M.sync_cap = old_cap ? 2 * old_cap : 64;
            M.sync_keys = (uintptr_t*)std::calloc(M.sync_cap, sizeof(uintptr_t));
            M.sync_clocks = (Clock*)std::calloc(M.sync_cap, sizeof(Clock));
            M.sync_n = 0;
            for (uint32_t i = 0; i < old_cap; ++i)
                if (old_keys[i]) {
                    *sync_clock(old_keys[i], true) = old_clocks[i];
                }
            std::free(old_keys);
            std::free(old_clocks);
        }
    }
    uint32_t mask = M.sync_cap - 1, i = (uint32_t)((key >> 2) * 2654435761u) & mask;
    while (M.sync_keys[i] && M.sync_keys[i] != key) i = (i + 1) & mask;
    if (M.sync_keys[i] == key) return &M.sync_clocks[i];
    if (!create) return nullptr;
    M.sync_keys[i] = key;
    M.sync_n++;
    return &M.sync_clocks[i];
}

// -- threads -------------------------------------------------------------------------------------
OPF_NOSAN static inline uint32_t own_clock(const Thread* t) { return t->vc[t->lin & 31]; }
OPF_NOSAN static inline void tick(Thread* t) { t->vc[t->lin & 31]++; t->epoch = 0; }

OPF_NOSAN static uint32_t epoch_of(Thread* t) {
    if (t->epoch) return t->epoch;
    if (M.nepochs >= M.cap) {
        M.cap = M.cap ? 2 * M.cap : 1 << 16;
        M.epochs = (EpochRec*)std::realloc(M.epochs, (size_t)M.cap * sizeof(EpochRec));
    }
    M.epochs[M.nepochs] = EpochRec{M.block, (uint16_t)t->lin, 0, M.interval, own_clock(t)};
    t->epoch = M.nepochs++;
    return t->epoch;
}

OPF_NOSAN static bool ordered(uint32_t e, const Thread* t) {
    if (e < M.base) return true;
    const EpochRec& p = M.epochs[e];
    if (p.block == M.block) {
        if (p.tid == t->lin || p.interval < M.interval) return true;
        if ((p.tid >> 5) == ((unsigned)t->lin >> 5)) return t->vc[p.tid & 31] >= p.clock;
        return false;
    }
    return clock_covers(t->know, p) || clock_covers(M.bk, p);
}

// What a release by `t` publishes: its knowledge, its block's, and its own block's accesses up to
// now (earlier intervals whole; this interval: the lanes it has synchronised with, itself included).
OPF_NOSAN static void release_snapshot(Thread* t) {
    clock_free(t->rel);
    clock_join(t->rel, t->know);
    clock_join(t->rel, M.bk);
    KEntry* k = clock_entry(t->rel, M.block, true);
    KEntry own{M.block, M.interval, 0, 0, nullptr};
    entry_join(k, own);
    int base = t->lin & ~31;
    for (int l = 0; l < 32; ++l)
        if (t->vc[l]) entry_note(k, (uint32_t)(base + l), t->vc[l]);
    t->released = true;
    tick(t);
}

// A barrier opened: the block's threads start a new interval knowing what any of them knew.
OPF_NOSAN static void barrier_sync(Thread* threads, int n) {
    if (!M.races) return;
    M.interval++;
    for (int i = 0; i < n; ++i) {
        if (threads[i].know.n) { clock_join(M.bk, threads[i].know); clock_free(threads[i].know); }
        tick(&threads[i]);
    }
}
// A warp collective completed: its lanes know what each of them knew.
OPF_NOSAN static void warp_sync(Thread** lanes, int count) {
    if (!M.races || count < 2) return;
    uint32_t joined[32] = {0};
    bool know = false;
    for (int i = 0; i < count; ++i) {
        for (int l = 0; l < 32; ++l) if (lanes[i]->vc[l] > joined[l]) joined[l] = lanes[i]->vc[l];
        know |= lanes[i]->know.n != 0;
    }
    Clock all{nullptr, 0, 0};
    if (know) for (int i = 0; i < count; ++i) clock_join(all, lanes[i]->know);
    for (int i = 0; i < count; ++i) {
        std::memcpy(lanes[i]->vc, joined, sizeof joined);
        if (know) clock_join(lanes[i]->know, all);
        tick(lanes[i]);
    }
    clock_free(all);
}

// A thread struct starts a new block's thread. Its lane clocks are kept: every thread's own clock only
// grows (within a launch and across), so what it knew of a lane in an earlier block is below anything
// that lane does now, and covers none of it.
OPF_NOSAN static inline void reset_thread(Thread* t) {
    t->vc[t->lin & 31]++;
    t->epoch = 0;
    if (t->know.e) clock_free(t->know);
    if (t->rel.e) clock_free(t->rel);
    t->released = false;
    t->npending = 0;
    t->spin_addr = 0;
    t->spin_count = 0;
}

// -- reporting -----------------------------------------------------------------------------------
// A location for messages, rewritten by the Python side: {@R:OFFSET:KIND} names the argument and
// element (KIND 0 a launcher buffer R, 1 device memory, 2 shared memory), {pc:0x..} the source line.
OPF_NOSAN static int locate(char* out, size_t n, const Region* r, uintptr_t a, size_t size = 1) {
    return snprintf(out, n, "{@%d:%lld:%d:%llu:%zu}", r->buf, (long long)(a - r->lo), r->kind,
                    (unsigned long long)(r->hi - r->lo), size);
}
static const char* const kAccessNames[] = {"accesses", "reads", "writes", "updates"};

OPF_NOSAN static void report_race(const Region* r, uintptr_t a, int mine, uint32_t other, int theirs, void* pc) {
    const EpochRec& p = M.epochs[other];
    char at[96];
    locate(at, sizeof at, r, a);
    unsigned ox = 0, oy = 0, oz = 0;
    if (gridDim.x && gridDim.y) {
        ox = p.block % gridDim.x; oy = (p.block / gridDim.x) % gridDim.y; oz = p.block / (gridDim.x * gridDim.y);
    }
    unsigned tx = blockDim.x ? p.tid % blockDim.x : 0, ty = blockDim.x && blockDim.y ? (p.tid / blockDim.x) % blockDim.y : 0;
    unsigned tz = blockDim.x && blockDim.y ? p.tid / (blockDim.x * blockDim.y) : 0;
    const char* why = p.block != M.block
        ? "different blocks, and no __threadfence() + atomic/volatile flag orders them"
        : (p.tid >> 5) == ((unsigned)E.cur->lin >> 5) ? "one warp, and no __syncwarp() between them"
                                                       : "no __syncthreads() between them";
    char msg[700];
    snprintf(msg, sizeof msg, "race: %s {pc:%p} %s %s, which block (%u,%u,%u) thread (%u,%u,%u) %s (%s)",
             where(), pc, kAccessNames[mine & 3], at, ox, oy, oz, tx, ty, tz,
             (theirs & A_WRITE) ? (theirs & A_READ ? "updated" : "wrote") : "read", why);
    fail(E_RACE, msg);
}

OPF_NOSAN static void report_fault(const char* what, const Region* r, uintptr_t a, size_t size, int flags, void* pc) {
    char at[96], msg[600];
    locate(at, sizeof at, r, a, size);
    static const char* const verbs[] = {"an access", "a read", "a write", "an update"};
    if (what[0] == 'o')
        snprintf(msg, sizeof msg, "out-of-bounds: %s %s in %s {pc:%p}", verbs[flags & 3], at, where(), pc);
    else
        snprintf(msg, sizeof msg, "misaligned: %s of %zu bytes at %s, an address %zu does not divide (a GPU faults: "
                 "misaligned address), in %s {pc:%p}", verbs[flags & 3], size, at, size, where(), pc);
    fail(what[0] == 'o' ? E_OOB : E_MISALIGNED, msg);
}

// -- the check -----------------------------------------------------------------------------------
// The bits of a 4-byte word that a byte mask (bit b: byte b) covers.
OPF_NOSAN static inline uint32_t byte_bits(uint8_t mask) {
    uint32_t m = 0;
    for (int b = 0; b < 4; ++b) if (mask >> b & 1) m |= 0xFFu << (8 * b);
    return m;
}

// A write whose bytes may equal what was there (all threads storing the same total): judged once the
// store is done, at the thread's next hook or yield.
OPF_NOSAN static void check_pending(Thread* t) {
    for (int i = 0; i < t->npending; ++i) {
        Pending& q = t->pending[i];
        uint32_t now;
        std::memcpy(&now, (const void*)q.word, 4);
        uint32_t m = byte_bits(q.mask);
        if ((now & m) != (q.before & m)) {
            t->npending = 0;
            Region* r = find_region(q.word);
            if (r) report_race(r, q.word, q.flags, q.other, q.theirs, q.pc);
            return;
        }
    }
    t->npending = 0;
}

OPF_NOSAN static void add_pending(Thread* t, uintptr_t word, uint8_t mask, uint32_t other, int theirs, int flags, void* pc) {
    if (t->npending == 8) return;
    Pending& q = t->pending[t->npending++];
    q.word = word; q.mask = mask; q.other = other; q.theirs = theirs; q.flags = flags; q.pc = pc;
    std::memcpy(&q.before, (const void*)word, 4);
}

// An epoch that cannot conflict: an earlier launch's, or another block's in shared memory (each
// block has its own).
OPF_NOSAN static inline bool live(uint32_t e, const Region* r) {
    return e >= M.base && (r->kind != 2 || M.epochs[e].block == M.block);
}

// A strong read (volatile, atomic) of a value the thread read there just before, kSpinLimit times
// in a row, is a spin on memory another block must change: the block is suspended and another runs
// (emu_launch.h run_blocks), as blocks resident together on a GPU would progress.
static const int kSpinLimit = 64;
OPF_NOSAN static void sync_access(uintptr_t a, int flags);
// `reads`: the strong read happens after this returns (a volatile load, an atomic load), so once the
// block runs again the value it reads is acquired then; an atomic RMW has already read.
OPF_NOSAN static void preempt_point(const volatile void* p, size_t size, bool reads = false) {
    Thread* t = E.cur;
    if (!t || !E.in_launch) return;
    uint64_t v = 0;
    std::memcpy(&v, (const void*)p, size < 8 ? size : 8);
    if ((uintptr_t)p != t->spin_addr || v != t->spin_val) {
        t->spin_addr = (uintptr_t)p;
        t->spin_val = v;
        t->spin_count = 0;
        return;
    }
    if (++t->spin_count < kSpinLimit || !E.can_suspend) return;
    t->spin_count = 0;
    if (t->npending) check_pending(t);
    E.suspend = true;
    t->state = T_READY;
    yield_thread();
    if (reads && find_region((uintptr_t)p)) sync_access((uintptr_t)p, A_READ);
}

OPF_NOSAN static void access(uintptr_t a, size_t size, int flags, void* pc) {
    Thread* t = E.cur;
    if (!t || !M.enabled) return;
    if (t->npending) check_pending(t);
    Region* r = find_near(a, size);
    if (!r) return;
    if (a < r->lo || a + size > r->hi) { report_fault("out-of-bounds", r, a, size, flags, pc); return; }
    if ((flags & A_ALIGNED) && size > 1 && (a & (size - 1))) { report_fault("misaligned", r, a, size, flags, pc); return; }
    if (r->kind == 3 || !M.races) return;
    Cell* sh = cells(r);
    if (!sh) return;
    uint32_t me = epoch_of(t);
    bool strong = flags & A_STRONG;
    uintptr_t off = a - r->lo, end = off + size;
    for (uintptr_t w = off & ~(uintptr_t)3; w < end; w += 4) {
        uintptr_t b0 = off > w ? off - w : 0, b1 = end < w + 4 ? end - w : 4;
        uint8_t mask = (uint8_t)(((1u << b1) - 1) & ~((1u << b0) - 1));
        Cell& c = sh[w / 4];
        uintptr_t word = r->lo + w;
        // the last write: a read or write of the same bytes must be ordered after it
        if (c.w && live(c.w, r) && (c.wm & mask) && c.w != me && !(strong && (c.fl & 1)) && !ordered(c.w, t)) {
            if (flags & A_WRITE) {
                add_pending(t, word, mask, c.w, A_WRITE, flags, pc);
            } else {  // a read sees the write or the value before it: a race only if those differ
                uint32_t now, m = byte_bits(mask & c.wm);
                std::memcpy(&now, (const void*)word, 4);
                if ((now & m) != (c.prior & m)) { report_race(r, word, flags, c.w, A_WRITE, pc); return; }
            }
        }
        if ((flags & A_WRITE) && strong) {
            // per-location coherence: earlier atomic reads of this word (other blocks' atomicInc of a
            // counter) come before this atomic write, and so before what this thread does here next
            // (the last block resetting the counter with a plain store, CUDA's threadFenceReduction)
            if (c.fl & 2) c.r1 = 0;
            if (c.fl & 4) c.r2 = 0;
        }
        if (flags & A_WRITE) {
            // earlier reads must be ordered before this write, unless it leaves the bytes as they were
            if (c.r1 && live(c.r1, r) && (c.r1m & mask) && c.r1 != me && !(strong && (c.fl & 2)) && !ordered(c.r1, t))
                add_pending(t, word, mask, c.r1, A_READ, flags, pc);
            else if (c.r2 && live(c.r2, r) && (c.r2m & mask) && c.r2 != me && !(strong && (c.fl & 4)) && !ordered(c.r2, t))
                add_pending(t, word, mask, c.r2, A_READ, flags, pc);
            if (c.w == me) {
                c.wm |= mask;
            } else {
                std::memcpy(&c.prior, (const void*)word, 4);
                c.w = me;
                c.wm = mask;
            }
            c.fl = (uint8_t)((c.fl & ~1) | (strong ? 1 : 0));
            if (!(flags & A_READ)) { c.r1 = c.r2 = 0; continue; }
        }
        if (flags & A_READ) {
            if (!c.r1 || !live(c.r1, r) || c.r1 == me || ordered(c.r1, t)) {
                c.r1 = me; c.r1m = mask; c.fl = (uint8_t)((c.fl & ~2) | (strong ? 2 : 0));
            } else if (!c.r2 || !live(c.r2, r) || c.r2 == me || ordered(c.r2, t)) {
                c.r2 = me; c.r2m = mask; c.fl = (uint8_t)((c.fl & ~4) | (strong ? 4 : 0));
            } else {  // two concurrent readers kept: the newest replaces the second
                c.r2 = me; c.r2m = mask; c.fl = (uint8_t)((c.fl & ~4) | (strong ? 4 : 0));
            }
        }
    }
}

// A strong (atomic or volatile) access of a synchronisation location: an acquire of what releases
// wrote there, and a release of the thread's last fence.
OPF_NOSAN static void sync_access(uintptr_t a, int flags) {
    Thread* t = E.cur;
    if (!t || !M.enabled) return;
    if (flags & A_READ) {
        Clock* c = sync_clock(a, false);
        if (c && c->n) { clock_join(t->know, *c); t->epoch = 0; }
    }
    if ((flags & A_WRITE) && t->released) clock_join(*sync_clock(a, true), t->rel);
}

OPF_NOSAN static void strong_access(const volatile void* p, size_t size, int flags, void* pc) {
    access((uintptr_t)p, size, flags | A_STRONG | A_ALIGNED, pc);
    if (!E.err_code && find_region((uintptr_t)p)) sync_access((uintptr_t)p, flags);
}

// __threadfence(): a release point for the thread's later atomic and volatile writes.
OPF_NOSAN static void fence(int scope) {
    Thread* t = E.cur;
    if (!t || !M.enabled) return;
    if (t->npending) check_pending(t);
    if (scope == 0) { tick(t); return; }  // block scope: nothing another block may rely on
    release_snapshot(t);
}

// Whether a happens-before race exists is a property of the accesses and the synchronisation a run
// makes, not of the order the emulator ran them in: the forward schedule and the first shuffle (whose
// atomics may hand out other tickets, so other accesses happen) are checked; the reverse and
// warps-ahead schedules still run, bounds-checked, and their results must agree.
OPF_NOSAN static inline bool detects(int schedule) { return schedule == 0 || schedule == 2; }

static const uint32_t kMaxEpochs = 1u << 22;  // 64 MB of epoch records
OPF_NOSAN static void launch_begin(unsigned long long blocks) {
    (void)blocks;
    // Every launch follows the previous one, so no epoch of an earlier launch can conflict: when the
    // table is large, forget them all (the shadows' pages dropped: zero, "no access", when touched
    // again) and start over, so a verification's hundreds of launches stay within a bounded table.
    if (M.nepochs > kMaxEpochs) {
        for (int i = 0; i < M.nregions; ++i)
            if (M.regions[i].shadow) madvise(M.regions[i].shadow, M.regions[i].shadow_bytes, MADV_DONTNEED);
        M.nepochs = 0;
    }
    if (M.nepochs == 0) M.nepochs = 1;  // epoch 0 means none
    M.base = M.nepochs;
    M.enabled = true;
    M.races = detects(E.schedule);
}
OPF_NOSAN static void block_begin(unsigned long long block) {
    M.block = (uint32_t)block;
    M.interval = 1;
    clock_free(M.bk);
}
OPF_NOSAN static void launch_end() {
    for (uint32_t i = 0; i < M.sync_cap; ++i) clock_free(M.sync_clocks[i]);
    if (M.sync_keys) std::memset(M.sync_keys, 0, M.sync_cap * sizeof(uintptr_t));
    M.sync_n = 0;
    clock_free(M.bk);
    M.enabled = M.races = false;
}
}  // namespace opforge_emu

// -- the instrumentation's entry points ----------------------------------------------------------
#define OPF_RW(n) \
    OPF_HOOK void __tsan_read##n(void* p) { ::opforge_emu::access((uintptr_t)p, n, ::opforge_emu::A_READ | ::opforge_emu::A_ALIGNED, __builtin_return_address(0)); } \
    OPF_HOOK void __tsan_write##n(void* p) { ::opforge_emu::access((uintptr_t)p, n, ::opforge_emu::A_WRITE | ::opforge_emu::A_ALIGNED, __builtin_return_address(0)); } \
    OPF_HOOK void __tsan_unaligned_read##n(void* p) { ::opforge_emu::access((uintptr_t)p, n, ::opforge_emu::A_READ, __builtin_return_address(0)); } \
    OPF_HOOK void __tsan_unaligned_write##n(void* p) { ::opforge_emu::access((uintptr_t)p, n, ::opforge_emu::A_WRITE, __builtin_return_address(0)); } \
    OPF_HOOK void __tsan_volatile_read##n(void* p) { ::opforge_emu::strong_access(p, n, ::opforge_emu::A_READ, __builtin_return_address(0)); ::opforge_emu::preempt_point(p, n, true); } \
    OPF_HOOK void __tsan_volatile_write##n(void* p) { ::opforge_emu::strong_access(p, n, ::opforge_emu::A_WRITE, __builtin_return_address(0)); }
OPF_RW(1) OPF_RW(2) OPF_RW(4) OPF_RW(8) OPF_RW(16)
OPF_HOOK void __tsan_read_range(void* p, long n) {
    if (n > 0) ::opforge_emu::access((uintptr_t)p, (size_t)n, ::opforge_emu::A_READ, __builtin_return_address(0));
}
OPF_HOOK void __tsan_write_range(void* p, long n) {
    if (n > 0) ::opforge_emu::access((uintptr_t)p, (size_t)n, ::opforge_emu::A_WRITE, __builtin_return_address(0));
}
OPF_HOOK void __tsan_init() {}
OPF_HOOK void __tsan_func_entry(void*) { ::opforge_emu::g_call_depth++; }
OPF_HOOK void __tsan_func_exit(void*) { ::opforge_emu::g_call_depth--; }
OPF_HOOK void __tsan_vptr_update(void*, void*) {}
OPF_HOOK void __tsan_vptr_read(void*) {}
OPF_HOOK void __tsan_atomic_signal_fence(int) {}
OPF_HOOK void __tsan_atomic_thread_fence(int mo) { if (mo >= 3) ::opforge_emu::fence(1); }

// C++ atomics in kernel code (std::atomic, __atomic builtins): done here, as the instrumentation
// expects; a release or stronger order is a fence first.
#define OPF_ATOMIC(bits, T) \
    OPF_HOOK T __tsan_atomic##bits##_load(const volatile T* a, int mo) { \
        ::opforge_emu::strong_access(a, sizeof(T), ::opforge_emu::A_READ, __builtin_return_address(0)); \
        ::opforge_emu::preempt_point(a, sizeof(T), true); T v = __atomic_load_n(a, __ATOMIC_SEQ_CST); (void)mo; return v; } \
    OPF_HOOK void __tsan_atomic##bits##_store(volatile T* a, T v, int mo) { \
        if (mo >= 3) ::opforge_emu::fence(1); \
        ::opforge_emu::strong_access(a, sizeof(T), ::opforge_emu::A_WRITE, __builtin_return_address(0)); \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST); } \
    OPF_ATOMIC_RMW(bits, T, exchange) OPF_ATOMIC_RMW(bits, T, fetch_add) OPF_ATOMIC_RMW(bits, T, fetch_sub) \
    OPF_ATOMIC_RMW(bits, T, fetch_and) OPF_ATOMIC_RMW(bits, T, fetch_or) OPF_ATOMIC_RMW(bits, T, fetch_xor) \
    OPF_ATOMIC_RMW(bits, T, fetch_nand) \
    OPF_HOOK int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int mo, int) { \
        if (mo >= 3) ::opforge_emu::fence(1); \
        ::opforge_emu::strong_access(a, sizeof(T), ::opforge_emu::A_READ | ::opforge_emu::A_WRITE, __builtin_return_address(0)); \
        return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); } \
    OPF_HOOK int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int mo, int) { \
        if (mo >= 3) ::opforge_emu::fence(1); \
        ::opforge_emu::strong_access(a, sizeof(T), ::opforge_emu::A_READ | ::opforge_emu::A_WRITE, __builtin_return_address(0)); \
        return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); } \
    OPF_HOOK T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int mo, int) { \
        if (mo >= 3) ::opforge_emu::fence(1); \
        ::opforge_emu::strong_access(a, sizeof(T), ::opforge_emu::A_READ | ::opforge_emu::A_WRITE, __builtin_return_address(0)); \
        __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return c; }
#define OPF_ATOMIC_RMW(bits, T, op) \
    OPF_HOOK T __tsan_atomic##bits##_##op(volatile T* a, T v, int mo) { \
        if (mo >= 3) ::opforge_emu::fence(1); \
        ::opforge_emu::strong_access(a, sizeof(T), ::opforge_emu::A_READ | ::opforge_emu::A_WRITE, __builtin_return_address(0)); \
        return OPF_##op(a, v, __ATOMIC_SEQ_CST); }
#define OPF_exchange __atomic_exchange_n
#define OPF_fetch_add __atomic_fetch_add
#define OPF_fetch_sub __atomic_fetch_sub
#define OPF_fetch_and __atomic_fetch_and
#define OPF_fetch_or __atomic_fetch_or
#define OPF_fetch_xor __atomic_fetch_xor
#define OPF_fetch_nand __atomic_fetch_nand
OPF_ATOMIC(8, unsigned char) OPF_ATOMIC(16, unsigned short) OPF_ATOMIC(32, unsigned int)
OPF_ATOMIC(64, unsigned long long)
