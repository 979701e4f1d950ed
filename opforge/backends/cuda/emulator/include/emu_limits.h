// opforge CUDA emulator: what a launch may use on the GPU (sm_90 unless Python loads another arch's
// table), joined with ptxas's per-kernel numbers that Python loads (emulator/limits.py). A launch
// over a limit fails as the driver fails it, with the numbers:
// - registers: allocated per warp in units of 256 (a thread's count rounded up to 8), at most 64K
//   per block -> cudaErrorLaunchOutOfResources ("too many resources requested for launch");
// - __launch_bounds__(max): a block of more threads than `max` (.maxntid) -> the same error;
// - shared memory: static (ptxas) + dynamic within the opt-in (cudaFuncSetAttribute
//   MaxDynamicSharedMemorySize, default 48 KB less the static part), the sum within the arch's max;
// - stack: each non-inlined __device__ call takes ptxas's frame; a recursion (ptxas cannot size the
//   stack, the driver gives cudaLimitStackSize, 1 KB by default) past the limit faults;
// - device malloc: one heap of cudaLimitMallocHeapSize (8 MB by default); malloc returns NULL past it.
// Without ptxas's numbers (no nvcc) only the heap and the launch shape are checked.
#pragma once
#include <cstdlib>
#include <cstring>
#include "emu_launch.h"
#include "emu_host.h"

namespace opforge_emu {
static const int kCudaOutOfResources = 701;  // cudaErrorLaunchOutOfResources
static const int kCudaLaunchFailure = 719;   // cudaErrorLaunchFailure

// The target's limits (Python loads them from backends/triton/resources.py; sm_90 until then).
struct ArchLimits { int arch; long regs_per_block, reg_unit, smem_optin, smem_default; };
static ArchLimits g_arch = {90, 65536, 256, 232448, 49152};

// ptxas's numbers per kernel (`name` as the source spells it, `base` without namespace and
// template arguments) and per non-inlined __device__ function (its frame).
struct KernelRes { char name[192], base[96]; int regs, smem, maxntid, frame; };
static KernelRes g_kernels[256];
static int g_nkernels = 0;
static bool g_loaded = false;  // a ptxas table was loaded: launches are checked against it
struct FnFrame { char base[96]; int frame; };
static FnFrame g_frames_known[256];
static int g_nframes_known = 0;

static size_t g_stack_limit = 1024;        // cudaLimitStackSize: bytes per thread
static size_t g_heap_limit = 8u << 20;     // cudaLimitMallocHeapSize
static size_t g_heap_used = 0;

static void base_name(const char* name, char* out, size_t n) {
    const char* start = name;
    for (const char* p = name; *p && *p != '<'; ++p)
        if (p[0] == ':' && p[1] == ':') start = p + 2;
    size_t k = 0;
    for (const char* p = start; *p && *p != '<' && k + 1 < n; ++p)
        if (*p != ' ') out[k++] = *p;
    out[k] = 0;
}
static void squeeze(const char* name, char* out, size_t n) {
    size_t k = 0;
    for (const char* p = name; *p && k + 1 < n; ++p)
        if (*p != ' ') out[k++] = *p;
    out[k] = 0;
}

// The kernel's numbers: its exact name, else every instantiation of its base name (a template
// launched with deduced or named-constant arguments) merged leniently, so a launch is never
// refused on another instantiation's numbers. False when ptxas reported no such kernel.
static bool kernel_res(const char* launched, KernelRes& out) {
    char name[192], base[96];
    squeeze(launched, name, sizeof name);
    base_name(launched, base, sizeof base);
    for (int i = 0; i < g_nkernels; ++i)
        if (!std::strcmp(g_kernels[i].name, name)) { out = g_kernels[i]; return true; }
    bool found = false;
    for (int i = 0; i < g_nkernels; ++i) {
        const KernelRes& k = g_kernels[i];
        if (std::strcmp(k.base, base)) continue;
        if (!found) { out = k; found = true; continue; }
        out.regs = k.regs < out.regs ? k.regs : out.regs;
        out.smem = k.smem < out.smem ? k.smem : out.smem;
        out.frame = k.frame < out.frame ? k.frame : out.frame;
        out.maxntid = !k.maxntid || !out.maxntid ? 0 : (k.maxntid > out.maxntid ? k.maxntid : out.maxntid);
    }
    return found;
}

// ---- the stack: a chain of the non-inlined __device__ frames active on each fiber ------------
struct Frame;
struct FiberChain { const void* fiber; Frame* top; };
static FiberChain g_chains[8192];
static int g_base_frame = 0;  // the launched kernel's own frame
static int g_max_depth = 0;   // the deepest chain of this launch

// The call depth of the current thread: the hook compiler instrumentation (function entry/exit)
// may call; the translator's Frame guards call it today.
static inline void note_call_depth(int depth) {
    if (depth > g_max_depth) g_max_depth = depth;
}

static FiberChain& chain_of(const void* fiber) {
    size_t h = ((uintptr_t)fiber >> 4) * 0x9E3779B97F4A7C15ull >> 51;  // 13 bits
    for (size_t i = 0;; ++i) {
        FiberChain& c = g_chains[(h + i) & 8191];
        if (c.fiber == fiber || !c.fiber) { c.fiber = fiber; return c; }
        if (i == 8191) { c.fiber = fiber; c.top = nullptr; return c; }  // full: reuse (never with <= 8192 fibers)
    }
}

static int g_slot_frame[512];  // slot 0: none (a function not yet seen, or past 511)
static char g_slot_name[512][96];
static int g_nslots = 1;

// A __device__ function's activation with a ptxas frame: a link of its fiber's chain.
struct Frame {
    Frame* prev;
    FiberChain* chain;
    int slot, bytes, depth;

    // Past the limit: a fault when a function recurs on the chain (its depth is data, so ptxas
    // could not size the stack and the driver gave cudaLimitStackSize); a chain without recursion
    // is sized by ptxas and the driver provides it.
    __attribute__((no_sanitize_thread)) void overflow() {
        int same = 0;
        for (Frame* f = this; f; f = f->prev) same += f->slot == slot;
        if (same < 2) return;
        char msg[512];
        snprintf(msg, sizeof msg, "out-of-resources: stack overflow (cudaErrorLaunchFailure on a GPU): %s: %s at "
                 "recursion depth %d (call depth %d) needs %d bytes of stack (ptxas: %d-byte frame each, kernel frame %d) "
                 "> the %zu-byte cudaLimitStackSize; recursion depth must be bounded, or raise the limit with "
                 "cudaDeviceSetLimit(cudaLimitStackSize, n)", where(), g_slot_name[slot], same, depth, bytes,
                 g_slot_frame[slot], g_base_frame, g_stack_limit);
        E.last_error = kCudaLaunchFailure;
        chain->top = prev;
        fail(E_LAUNCH, msg);
    }
};
struct FrameBuf { alignas(Frame) unsigned char bytes[sizeof(Frame)]; };

static int frame_slot(const char* fn);

// Entry: the Frame linked in `buf`, or nullptr for the common case (an inlined or frameless
// function: nothing to charge). Not instrumented, and the only code that touches the slot and
// the buffer, so a guard costs the instrumented kernel one call and no memory hooks.
__attribute__((noinline, no_sanitize_thread)) static Frame* frame_enter(int* slot, const char* fn, FrameBuf* buf) {
    if (!*slot) *slot = frame_slot(fn);
    int s = *slot;
    if (!g_slot_frame[s] || !E.in_launch || !E.cur_fiber) return nullptr;
    Frame* f = reinterpret_cast<Frame*>(buf);
    f->chain = &chain_of(E.cur_fiber);
    f->prev = f->chain->top;
    f->slot = s;
    f->bytes = (f->prev ? f->prev->bytes : g_base_frame) + g_slot_frame[s];
    f->depth = (f->prev ? f->prev->depth : 0) + 1;
    f->chain->top = f;
    note_call_depth(f->depth);
    if ((size_t)f->bytes > g_stack_limit) f->overflow();
    return f;
}
__attribute__((noinline, no_sanitize_thread)) static void frame_leave(Frame* f) { f->chain->top = f->prev; }

struct FrameScope {
    Frame* f;
    __attribute__((always_inline)) ~FrameScope() {
        if (__builtin_expect(f != nullptr, 0)) frame_leave(f);
    }
};

static int frame_of(const char* base) {  // overloads and instantiations share a base: the largest frame
    int frame = 0;
    for (int i = 0; i < g_nframes_known; ++i)
        if (!std::strcmp(g_frames_known[i].base, base) && g_frames_known[i].frame > frame) frame = g_frames_known[i].frame;
    return frame;
}
static int frame_slot(const char* fn) {
    if (g_nslots == 512) return 0;
    int s = g_nslots++;
    base_name(fn, g_slot_name[s], sizeof g_slot_name[s]);
    g_slot_frame[s] = frame_of(g_slot_name[s]);
    return s;
}

// ---- the device heap ---------------------------------------------------------------------------
// A block is device memory to the memory model (a tracked region, so races and out-of-bounds
// accesses in it are found) with 1 KB of padding each side: its guard zone is its own.
struct HeapHeader { size_t n; size_t magic; };
static const size_t kHeapMagic = 0x0f0f6865617021ull;
static const size_t kHeapPad = 1024;
__attribute__((no_sanitize_thread)) static void* device_malloc(size_t n) {
    if (!E.in_launch) return std::malloc(n);  // host code: the process's heap
    size_t take = (n + 15) / 16 * 16;
    if (take > g_heap_limit || g_heap_used > g_heap_limit - take) return nullptr;  // as a GPU: NULL
    unsigned char* raw = (unsigned char*)std::malloc(kHeapPad + take + kHeapPad);
    if (!raw) return nullptr;
    HeapHeader* h = (HeapHeader*)(raw + kHeapPad) - 1;
    h->n = take;
    h->magic = kHeapMagic;
    g_heap_used += take;
    add_range(raw + kHeapPad, take);
    track(raw + kHeapPad, take, 1, -1);
    return raw + kHeapPad;
}
__attribute__((no_sanitize_thread)) static void device_free(void* p) {
    if (!p) return;
    if (!E.in_launch) { std::free(p); return; }
    HeapHeader* h = (HeapHeader*)p - 1;
    if (h->magic != kHeapMagic) return;  // not from the device heap: a GPU's free would corrupt it; ignored
    h->magic = 0;
    g_heap_used -= h->n;
    remove_range(p);
    untrack(p);
    std::free((unsigned char*)p - kHeapPad);
}

// ---- the launch --------------------------------------------------------------------------------
static bool out_of_resources(int cuda_code, const char* fmt, ...) {
    char what[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    E.last_error = cuda_code;
    format_error(E_LAUNCH, "out-of-resources: %s: kernel %s (line %d) did not run: %s", cuda_code == kCudaOutOfResources ?
                 "too many resources requested for launch (cudaErrorLaunchOutOfResources)" :
                 "launch refused (cudaErrorInvalidValue)", E.kernel, E.launch_line, what);
    return false;
}

// Called by run_launch once the launch's shape is valid: false (the error set) when the GPU
// would refuse the launch.
static bool launch_resources_ok(const LaunchConfig& c, const void* fn) {
    std::memset(g_chains, 0, sizeof g_chains);
    g_max_depth = 0;
    g_base_frame = 0;
    KernelRes k;
    if (!g_loaded || !kernel_res(E.kernel, k)) return true;
    g_base_frame = k.frame;
    long threads = (long)c.block.x * c.block.y * c.block.z, warps = (threads + 31) / 32;
    long per_warp = (k.regs * 32L + g_arch.reg_unit - 1) / g_arch.reg_unit * g_arch.reg_unit;
    if (per_warp * warps > g_arch.regs_per_block)
        return out_of_resources(kCudaOutOfResources, "it uses %d registers per thread (ptxas) x %ld threads = %ld "
                                "registers per block (%ld warps x %ld, allocated per warp in units of %ld) > %ld on sm_%d; "
                                "at most %ld threads fit (or cap the registers with __launch_bounds__)", k.regs, threads,
                                per_warp * warps, warps, per_warp, g_arch.reg_unit, g_arch.regs_per_block, g_arch.arch,
                                g_arch.regs_per_block / per_warp * 32);
    if (k.maxntid && threads > k.maxntid)
        return out_of_resources(kCudaOutOfResources, "a block of %ld threads, more than its __launch_bounds__ "
                                "maximum of %d (.maxntid)", threads, k.maxntid);
    long dyn = (long)c.smem, optin = -1;
    if (fn)
        for (int i = 0; i < g_nattrs; ++i)
            if (g_attrs[i].fn == fn) optin = g_attrs[i].max_dynamic_smem;
    if (optin >= 0 && k.smem + optin > g_arch.smem_optin) optin = -1;  // cudaFuncSetAttribute failed on a GPU
    long allowed = optin >= 0 ? optin : (fn ? g_arch.smem_default - k.smem : g_arch.smem_optin - k.smem);
    if (k.smem + dyn > g_arch.smem_optin)
        return out_of_resources(1, "%d bytes of static (ptxas) + %ld of dynamic shared memory = %ld > the %ld an "
                                "sm_%d block may have", k.smem, dyn, k.smem + dyn, g_arch.smem_optin, g_arch.arch);
    if (dyn > allowed)
        return out_of_resources(1, "%d bytes of static (ptxas) + %ld of dynamic shared memory = %ld, and %s allows "
                                "%ld bytes of dynamic shared memory: above %ld in all a kernel must opt in with "
                                "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)",
                                k.smem, dyn, k.smem + dyn, optin >= 0 ? "its cudaFuncAttributeMaxDynamicSharedMemorySize"
                                : "the default", allowed, g_arch.smem_default);
    return true;
}
}  // namespace opforge_emu

// The translator puts this first in every __device__ function body (not in constexpr ones).
// A plain static (no guard variable): the slot is taken on the first call.
#define OPFORGE_EMU_FRAME()                                   \
    static int opforge_emu_frame_slot_ = 0;                   \
    ::opforge_emu::FrameBuf opforge_emu_frame_buf_;           \
    ::opforge_emu::FrameScope opforge_emu_frame_{::opforge_emu::frame_enter(&opforge_emu_frame_slot_, __func__, &opforge_emu_frame_buf_)}

enum cudaLimit { cudaLimitStackSize = 0, cudaLimitPrintfFifoSize = 1, cudaLimitMallocHeapSize = 2 };
static inline cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
    if (limit == cudaLimitStackSize) opforge_emu::g_stack_limit = value;
    else if (limit == cudaLimitMallocHeapSize) opforge_emu::g_heap_limit = value;
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
    *value = limit == cudaLimitStackSize ? opforge_emu::g_stack_limit
           : limit == cudaLimitMallocHeapSize ? opforge_emu::g_heap_limit : (size_t)1 << 20;
    return cudaSuccess;
}

// Python's side (emulator/limits.py): the target's limits, then one call per kernel and per function frame.
extern "C" __attribute__((visibility("default"))) int opforge_emu_set_arch(int arch, long regs_per_block, long reg_unit,
                                                                         long smem_optin, long smem_default) {
    opforge_emu::g_arch = opforge_emu::ArchLimits{arch, regs_per_block, reg_unit, smem_optin, smem_default};
    opforge_emu::g_nkernels = opforge_emu::g_nframes_known = 0;
    opforge_emu::g_loaded = true;
    return 0;
}
extern "C" __attribute__((visibility("default"))) int opforge_emu_set_kernel(const char* name, int regs, int smem,
                                                                           int maxntid, int frame) {
    using namespace opforge_emu;
    if (g_nkernels == 256) return 1;
    KernelRes& k = g_kernels[g_nkernels++];
    squeeze(name, k.name, sizeof k.name);
    base_name(name, k.base, sizeof k.base);
    k.regs = regs, k.smem = smem, k.maxntid = maxntid, k.frame = frame;
    return 0;
}
extern "C" __attribute__((visibility("default"))) int opforge_emu_set_frame(const char* name, int frame) {
    using namespace opforge_emu;
    if (g_nframes_known == 256) return 1;
    FnFrame& f = g_frames_known[g_nframes_known++];
    base_name(name, f.base, sizeof f.base);
    f.frame = frame;
    for (int s = 1; s < g_nslots; ++s)  // functions that already ran
        if (!std::strcmp(g_slot_name[s], f.base) && frame > g_slot_frame[s]) g_slot_frame[s] = frame;
    return 0;
}
// The deepest call chain of the last launch, and the device heap in use (for tests and notes).
extern "C" __attribute__((visibility("default"))) int opforge_emu_max_call_depth() { return opforge_emu::g_max_depth; }
extern "C" __attribute__((visibility("default"))) unsigned long long opforge_emu_heap_used() {
    return opforge_emu::g_heap_used;
}
