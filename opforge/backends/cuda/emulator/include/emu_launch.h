// opforge CUDA emulator: `k<<<grid, block, smem, stream>>>(args)` (the translator rewrites it to
// launch(...)), launch-configuration checks, dynamic shared memory, traps, and the C entry points
// the Python side calls around a launcher.
#pragma once
#include <tuple>
#include <type_traits>
#include <utility>
#include "emu_watch.h"

typedef struct CUstream_st* cudaStream_t;

namespace opforge_emu {
static const size_t kSmemMax = 232448;      // 227 KB: sm_90's shared memory per block (opt-in)
static const size_t kSmemDefault = 49152;   // above 48 KB a kernel must opt in (cudaFuncSetAttribute)
static const size_t kSmemCanary = 256;
alignas(1024) static unsigned char g_dyn_smem[kSmemMax + kSmemCanary];

struct LaunchConfig { dim3 grid, block; size_t smem; };
OPF_NOSAN static inline LaunchConfig cfg(dim3 g, dim3 b, size_t smem = 0, cudaStream_t = nullptr) { return {g, b, smem}; }

struct FuncAttr { const void* fn; int max_dynamic_smem; };
static FuncAttr g_attrs[256];
static int g_nattrs = 0;
OPF_NOSAN static int max_dynamic_smem(const void* fn) {
    if (!fn) return (int)kSmemMax;  // a deduced template launch: its attribute cannot be looked up
    for (int i = 0; i < g_nattrs; ++i)
        if (g_attrs[i].fn == fn) return g_attrs[i].max_dynamic_smem;
    return (int)kSmemDefault;
}

OPF_NOSAN static bool launch_error(int cuda_code, const char* fmt, unsigned long long a, unsigned long long b) {
    char what[256];
    snprintf(what, sizeof what, fmt, a, b);
    E.last_error = cuda_code;
    format_error(E_LAUNCH, "launch-error: kernel %s (line %d) did not run: %s", E.kernel, E.launch_line, what);
    return false;
}

OPF_NOSAN static bool valid_config(const LaunchConfig& c, const void* fn) {
    unsigned long long threads = (unsigned long long)c.block.x * c.block.y * c.block.z;
    if (!c.block.x || !c.block.y || !c.block.z || threads > 1024 || c.block.z > 64)
        return launch_error(9, "a block of %llu threads (at most 1024, z at most 64; blockDim.z=%llu)", threads, c.block.z);
    if (!c.grid.x || !c.grid.y || !c.grid.z || c.grid.x > 2147483647u || c.grid.y > 65535 || c.grid.z > 65535)
        return launch_error(9, "a grid of (%llu, %llu, ...) blocks (x at most 2^31-1, y and z at most 65535, none 0)",
                            c.grid.x, c.grid.y);
    if (c.smem > kSmemMax)
        return launch_error(1, "%llu bytes of dynamic shared memory, more than the %llu an sm_90 block has",
                            c.smem, kSmemMax);
    if (c.smem > (size_t)max_dynamic_smem(fn))
        return launch_error(1, "%llu bytes of dynamic shared memory without cudaFuncSetAttribute("
                            "cudaFuncAttributeMaxDynamicSharedMemorySize) above %llu", c.smem, kSmemDefault);
    return true;
}

OPF_NOSAN static bool smem_canary_intact(size_t smem) {
    for (size_t i = 0; i < kSmemCanary; ++i)
        if (g_dyn_smem[smem + i] != 0xA5) {
            size_t last = kSmemCanary;
            while (g_dyn_smem[smem + last - 1] == 0xA5) --last;
            format_error(E_OOB, "out-of-bounds: a write %zu bytes past the end of the %zu bytes of dynamic "
                         "shared memory in %s", last, smem, where());
            return false;
        }
    return true;
}

// Static __shared__ variables, registered by the translator's shared_seen() calls.
struct SharedRegion { void* p; size_t n; };
static SharedRegion g_shared[256];
static int g_nshared = 0;
OPF_NOSAN static inline void shared_seen(void* p, size_t n) {
    for (int i = g_nshared - 1; i >= 0; --i)
        if (g_shared[i].p == p) return;
    if (g_nshared == 256) return;
    g_shared[g_nshared++] = SharedRegion{p, n};
    track(p, n, 2, -1);
    std::memset(p, 0xFF, n);  // first sight: no thread of this block can have written it yet
}

OPF_NOSAN static unsigned long long gcd(unsigned long long a, unsigned long long b) { return b ? gcd(b, a % b) : a; }

// A block suspended while it spins: its threads (their fibers keep their stacks), its scheduler
// state, its shared memory and its memory-model state, put back when it runs again.
struct SavedBlock {
    unsigned long long id;
    uint3 idx;
    Thread* threads;
    int* order;
    int pos, live, arrived, pred_count, sync_result, sync_arrivals, activemask_waiters;
    int warp_waiting[kMaxThreads / 32];
    bool released, sweep_progress;
    unsigned char* shared;
    uint32_t interval;
    Clock bk;
};
OPF_NOSAN static size_t shared_bytes(size_t smem) {
    size_t n = smem;
    for (int r = 0; r < g_nshared; ++r) n += g_shared[r].n;
    return n;
}
OPF_NOSAN static void save_block(SavedBlock& b, unsigned long long id, size_t smem) {
    b.id = id;
    b.idx = blockIdx;
    b.threads = (Thread*)std::malloc(sizeof(Thread) * E.n);
    b.order = (int*)std::malloc(sizeof(int) * E.n);
    std::memcpy(b.threads, E.threads, sizeof(Thread) * E.n);
    std::memcpy(b.order, E.order, sizeof(int) * E.n);
    for (int i = 0; i < E.n; ++i) {  // the clocks now belong to the saved copy
        E.threads[i].know = Clock{nullptr, 0, 0};
        E.threads[i].rel = Clock{nullptr, 0, 0};
    }
    b.pos = E.pos; b.live = E.live; b.arrived = E.arrived; b.pred_count = E.pred_count;
    b.sync_result = E.sync_result; b.sync_arrivals = E.sync_arrivals; b.activemask_waiters = E.activemask_waiters;
    std::memcpy(b.warp_waiting, E.warp_waiting, sizeof b.warp_waiting);
    b.released = E.released;
    b.sweep_progress = E.sweep_progress;
    b.shared = (unsigned char*)std::malloc(shared_bytes(smem) + 1);
    size_t at = 0;
    std::memcpy(b.shared, g_dyn_smem, smem);
    at += smem;
    for (int r = 0; r < g_nshared; ++r) { std::memcpy(b.shared + at, g_shared[r].p, g_shared[r].n); at += g_shared[r].n; }
    b.interval = M.interval;
    b.bk = M.bk;
    M.bk = Clock{nullptr, 0, 0};
}
OPF_NOSAN static void restore_block(SavedBlock& b, size_t smem) {
    blockIdx = b.idx;
    for (int i = 0; i < E.n; ++i) { clock_free(E.threads[i].know); clock_free(E.threads[i].rel); }
    std::memcpy(E.threads, b.threads, sizeof(Thread) * E.n);
    std::memcpy(E.order, b.order, sizeof(int) * E.n);
    E.pos = b.pos; E.live = b.live; E.arrived = b.arrived; E.pred_count = b.pred_count;
    E.sync_result = b.sync_result; E.sync_arrivals = b.sync_arrivals; E.activemask_waiters = b.activemask_waiters;
    std::memcpy(E.warp_waiting, b.warp_waiting, sizeof b.warp_waiting);
    E.released = b.released;
    E.sweep_progress = b.sweep_progress;
    E.suspend = false;
    size_t at = 0;
    std::memcpy(g_dyn_smem, b.shared, smem);
    at += smem;
    for (int r = 0; r < g_nshared; ++r) { std::memcpy(g_shared[r].p, b.shared + at, g_shared[r].n); at += g_shared[r].n; }
    clock_free(M.bk);
    M.block = (uint32_t)b.id;
    M.interval = b.interval;
    M.bk = b.bk;
    std::free(b.threads);
    std::free(b.order);
    std::free(b.shared);
}
OPF_NOSAN static void drop_saved(SavedBlock* saved, int n) {
    for (int k = 0; k < n; ++k) {
        for (int i = 0; i < E.n; ++i) { clock_free(saved[k].threads[i].know); clock_free(saved[k].threads[i].rel); }
        std::free(saved[k].threads);
        std::free(saved[k].order);
        std::free(saved[k].shared);
        clock_free(saved[k].bk);
    }
}

// Blocks in the schedule's order: forward, reverse, or a seeded affine permutation (a*k+b mod n).
// One block runs at a time; a block whose thread spins on memory (a flag, a lock, a counter another
// block must change) is suspended and the next block starts, or the oldest suspended one resumes,
// up to kMaxResident blocks (and kMaxFibers threads) alive at once, as blocks resident together on a
// GPU progress. A wait for more blocks than that (a grid-wide barrier over a large grid) meets the
// step limit.
OPF_NOSAN static void run_blocks(size_t smem) {
    unsigned long long nb = (unsigned long long)gridDim.x * gridDim.y * gridDim.z, a = 1, b = 0;
    if (E.schedule >= 2 && nb > 1) {
        unsigned long long s = E.seed * 31ull + E.schedule;
        do a = 1 + splitmix(s) % (nb - 1); while (gcd(a, nb) != 1);
        b = splitmix(s) % nb;
    }
    static SavedBlock saved[kMaxResident];
    int nsaved = 0;
    unsigned long long k = 0, current = 0;
    bool active = false;
    for (;;) {
        if (!active) {
            if (k < nb) {
                unsigned long long i = E.schedule == 0 ? k : E.schedule == 1 ? nb - 1 - k
                                     : (unsigned long long)(((unsigned __int128)a * k + b) % nb);
                ++k;
                blockIdx = uint3{(unsigned)(i % gridDim.x), (unsigned)((i / gridDim.x) % gridDim.y),
                                 (unsigned)(i / ((unsigned long long)gridDim.x * gridDim.y))};
                std::memset(g_dyn_smem, 0xFF, smem);  // NaN for floats, -1 for integers: uninitialised reads show
                for (int r = 0; r < g_nshared; ++r) std::memset(g_shared[r].p, 0xFF, g_shared[r].n);
                init_block(i);
                current = i;
            } else if (nsaved) {
                SavedBlock next = saved[0];
                for (int q = 1; q < nsaved; ++q) saved[q - 1] = saved[q];
                --nsaved;
                restore_block(next, smem);
                current = next.id;
            } else {
                return;
            }
            active = true;
        }
        int resident = kMaxFibers / E.n < kMaxResident ? kMaxFibers / E.n : kMaxResident;
        E.can_suspend = nsaved < resident - 1 && (k < nb || nsaved > 0);
        int status = continue_block();
        if (status == B_FAILED) { drop_saved(saved, nsaved); return; }
        if (status == B_DONE) {
            if (!smem_canary_intact(smem)) { drop_saved(saved, nsaved); return; }
            active = false;
            continue;
        }
        save_block(saved[nsaved++], current, smem);
        active = false;
    }
}

OPF_NOSAN static bool launch_resources_ok(const LaunchConfig& c, const void* fn);  // emu_limits.h: ptxas's numbers

OPF_NOSAN static void run_launch(const LaunchConfig& c, int line, const char* name, const void* fn, void (*body)(void*), void* arg) {
    if (E.err_code) return;  // an earlier launch of this call failed: CUDA errors are sticky too
    E.kernel = name;
    E.launch_line = line;
    if (!valid_config(c, fn)) return;
    if (!launch_resources_ok(c, fn)) return;
    E.body = body;
    E.arg = arg;
    blockDim = c.block;
    gridDim = c.grid;
    E.n = (int)(c.block.x * c.block.y * c.block.z);
    std::memset(g_dyn_smem + c.smem, 0xA5, kSmemCanary);
    if (E.fibers_dirty) reset_fibers();
    static size_t smem;
    smem = c.smem;
    launch_begin((unsigned long long)c.grid.x * c.grid.y * c.grid.z);
    if (smem) track(g_dyn_smem, smem, 2, -1);
    E.in_launch = true;
    if (W.armed) {  // inside invoke(): its watchdog covers the whole launcher call
        run_blocks(smem);
    } else {        // a launch from elsewhere (a static initialiser) gets its own
        if (sigsetjmp(W.jmp, 1) == 0) {
            arm_watchdog();
            run_blocks(smem);
        }
        disarm_watchdog();
    }
    E.in_launch = false;
    E.cur = nullptr;
    E.cur_fiber = nullptr;
    launch_end();
    if (E.err_code) E.fibers_dirty = true;
}

// A launcher called from Python: args[i] points at the value of parameter i. The CPU-time limit
// and fault capture cover the whole call, host code included (a launcher looping forever).
template <class... P, size_t... I>
OPF_NOSAN static void call_unpacked(void (*fn)(P...), void** args, std::index_sequence<I...>) {
    fn(*static_cast<std::decay_t<P>*>(args[I])...);
}
template <class... P> OPF_NOSAN static int invoke(void (*fn)(P...), void** args) {
    E.in_launch = false;
    if (sigsetjmp(W.jmp, 1) == 0) {
        arm_watchdog();
        call_unpacked(fn, args, std::index_sequence_for<P...>{});
    }
    disarm_watchdog();
    E.in_launch = false;
    E.cur = nullptr;
    E.cur_fiber = nullptr;
    if (E.err_code) E.fibers_dirty = true;
    return E.err_code;
}

// Device memory: the launcher's buffers (set by the caller) and what cudaMalloc returned. A kernel
// given a pointer anywhere else (a host array) would fault on a GPU.
struct Range { uintptr_t lo, hi; };
static Range g_ranges[512];
static int g_nranges = 0;
OPF_NOSAN static void add_range(const void* p, size_t n) {
    if (g_nranges < 512) g_ranges[g_nranges++] = Range{(uintptr_t)p, (uintptr_t)p + n};
}
OPF_NOSAN static void remove_range(const void* p) {
    for (int i = 0; i < g_nranges; ++i)
        if (g_ranges[i].lo == (uintptr_t)p) { g_ranges[i] = g_ranges[--g_nranges]; return; }
}
OPF_NOSAN static bool device_pointer(const void* p) {
    for (int i = 0; i < g_nranges; ++i)
        if ((uintptr_t)p >= g_ranges[i].lo && (uintptr_t)p <= g_ranges[i].hi) return true;
    return p == nullptr;
}
template <class T> OPF_NOSAN static bool check_pointer(const T& v, int index) {
    if constexpr (std::is_pointer<T>::value) {
        if (!device_pointer((const void*)v)) {
            format_error(E_POINTER, "bad-pointer: kernel %s (line %d) did not run: argument %d points at %p, outside "
                         "every buffer of the launcher and every cudaMalloc (host memory is not device memory on a GPU)",
                         E.kernel, E.launch_line, index + 1, (const void*)v);
            return false;
        }
    }
    return true;
}
template <class Tuple, size_t... I> OPF_NOSAN static bool pointers_ok(const Tuple& t, std::index_sequence<I...>) {
    return (check_pointer(std::get<I>(t), (int)I) && ...);
}

template <class Packed> OPF_NOSAN static void run_packed(void* q) {
    Packed* p = (Packed*)q;
    std::apply(p->k, p->args);
}

template <class... P, class... A>
OPF_NOSAN static void launch(int line, const char* name, LaunchConfig c, void (*k)(P...), A&&... a) {
    static_assert(sizeof...(P) == sizeof...(A), "a kernel launch passes as many arguments as the kernel takes");
    struct Packed {
        void (*k)(P...);
        std::tuple<std::decay_t<P>...> args;
    };
    Packed p{k, std::tuple<std::decay_t<P>...>(std::forward<A>(a)...)};
    if (E.err_code) return;
    E.kernel = name;
    E.launch_line = line;
    if (!pointers_ok(p.args, std::index_sequence_for<P...>{})) return;
    run_launch(c, line, name, (const void*)k, &run_packed<Packed>, &p);
}

template <class F> OPF_NOSAN static void run_lambda(void* f) { (*(F*)f)(); }

// The lambda form (a deduced template kernel): no function address, so no per-kernel attributes.
template <class F> OPF_NOSAN static void launch(int line, const char* name, LaunchConfig c, std::nullptr_t, F f) {
    run_launch(c, line, name, nullptr, &run_lambda<F>, &f);
}

OPF_NOSAN static void trap(int line, const char* what) {
    char msg[512];
    snprintf(msg, sizeof msg, "trap: %s (line %d) in %s", what, line, where());
    fail(E_TRAP, msg);
}
}  // namespace opforge_emu

#define __trap() ::opforge_emu::trap(__LINE__, "__trap() called")
#define __brkpt() ::opforge_emu::trap(__LINE__, "__brkpt() called")
#undef assert
#define assert(e) ((e) ? (void)0 : ::opforge_emu::trap(__LINE__, "assertion `" #e "` failed"))

extern "C" __attribute__((visibility("default"))) int opforge_emu_configure(int schedule, unsigned long long seed,
                                                                          double time_limit) {
    opforge_emu::E.schedule = schedule;
    opforge_emu::E.seed = seed;
    opforge_emu::E.time_limit = time_limit;
    opforge_emu::E.err_code = opforge_emu::E.last_error = 0;
    opforge_emu::E.err[0] = 0;
    opforge_emu::g_float_atomics = false;
    opforge_emu::g_float_atomic_cells.clear();
    return 0;
}
// The launcher's buffers for the next call: n (address, bytes) pairs; cudaMalloc'd blocks are kept.
extern "C" __attribute__((visibility("default"))) int opforge_emu_set_buffers(const unsigned long long* pairs, int n) {
    opforge_emu::g_nranges = 0;
    opforge_emu::untrack_buffers();
    for (int i = 0; i < n; ++i) {
        opforge_emu::add_range((const void*)(uintptr_t)pairs[2 * i], (size_t)pairs[2 * i + 1]);
        opforge_emu::track((const void*)(uintptr_t)pairs[2 * i], (size_t)pairs[2 * i + 1], 0, i);
    }
    opforge_emu::prune_buffers();
    return 0;
}
// Launcher buffers that every parameter takes as const: bounds-checked, not race-tracked (emu_mem.h).
extern "C" __attribute__((visibility("default"))) int opforge_emu_set_readonly(const int* buffers, int n) {
    for (int i = 0; i < n; ++i) opforge_emu::mark_readonly(buffers[i]);
    return 0;
}
extern "C" __attribute__((visibility("default"))) int opforge_emu_error(char* buf, int n) {
    snprintf(buf, n, "%s", opforge_emu::E.err);
    return opforge_emu::E.err_code;
}
extern "C" __attribute__((visibility("default"))) int opforge_emu_float_atomics() {
    return opforge_emu::g_float_atomics;
}
// The last run's float atomics: max over addresses of sqrt(count) * the largest magnitude touched.
extern "C" __attribute__((visibility("default"))) double opforge_emu_float_atomic_spread() {
    return opforge_emu::float_atomic_spread();
}
