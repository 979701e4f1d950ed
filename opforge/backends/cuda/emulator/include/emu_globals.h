// opforge CUDA emulator: the candidate's variables of static storage, registered by the translator
// (statics.py) right after their declarations. A GPU initialises __device__ variables at module load
// and keeps them from launch to launch and from call to call, so each is kept here with its
// load-time bytes: after a call the Python side (state.py) compares, restores and reruns.
// Namespace-scope __shared__ arrays are per block: shared_at_load() hands them to the runtime's
// block poisoning (shared_seen, emu_launch.h), which fills them with 0xFF before every block.
#pragma once
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include "emu_launch.h"

namespace opforge_emu {
struct StaticVar { const char* name; int line; void* p; size_t n; unsigned char* initial; };
static const int kMaxStatics = 1024;
static StaticVar g_statics[kMaxStatics];
static int g_nstatics = 0;
static bool g_statics_overflow = false;

// Called once per variable (a namespace-scope one at load, a static local when its declaration
// first runs). Const objects cannot change; objects that are not trivially copyable (a class with
// its own copy semantics) are left out, as restoring their bytes would not be a copy. Not hooked
// (no_sanitize_thread): a static local's registration runs inside its guarded initialisation, where
// no fiber may switch.
template <class T> __attribute__((noinline, no_sanitize_thread)) static bool static_var(T& v, const char* name,
                                                                                       int line) {
    if constexpr (std::is_const<T>::value || !std::is_trivially_copyable<T>::value) {
        return false;
    } else {
        if (g_nstatics == kMaxStatics) return g_statics_overflow = true, false;
        void* p = (void*)&v;
        unsigned char* initial = (unsigned char*)std::malloc(sizeof(T) ? sizeof(T) : 1);
        if (!initial) return g_statics_overflow = true, false;
        std::memcpy(initial, p, sizeof(T));
        g_statics[g_nstatics++] = StaticVar{name, line, p, sizeof(T), initial};
        track(p, sizeof(T), 4, -1);  // device memory to the memory model: a __device__ flag or scratch races too
        return true;
    }
}

// A namespace-scope __shared__ variable: poisoned before every block like a function-scope one.
static inline void shared_at_load(void* p, size_t n) { shared_seen(p, n); }
}  // namespace opforge_emu

// The registry for state.py: count (-1 when a variable could not be registered), then each entry.
extern "C" __attribute__((visibility("default"))) int opforge_emu_statics() {
    return opforge_emu::g_statics_overflow ? -1 : opforge_emu::g_nstatics;
}
extern "C" __attribute__((visibility("default"))) int opforge_emu_static(int i, const char** name, int* line, void** p,
                                                                       unsigned long long* n, void** initial) {
    if (i < 0 || i >= opforge_emu::g_nstatics) return 0;
    const opforge_emu::StaticVar& v = opforge_emu::g_statics[i];
    *name = v.name;
    *line = v.line;
    *p = v.p;
    *n = v.n;
    *initial = v.initial;
    return 1;
}
