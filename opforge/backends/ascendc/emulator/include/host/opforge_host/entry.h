// The library's C entry points, compiled once per build in host_entry.cpp: Python (emulator/library.py) lists the
// bound functions, allocates GM for a call's tensors, calls a function with Values and reads back an error.
// Every opforge_asc::EmuError and std::exception stops at opforge_asc_call: a code and a message, never a crash.
#pragma once
#include <csetjmp>
#include <csignal>
#include <string>

#include "opforge_host/bind.h"
#include "opforge_host/exec.h"

namespace opforge_host {
inline std::string& last_error() {
    static std::string s;
    return s;
}

// A kernel's integer division by zero or wild pointer is a signal, not an exception: during a call the handler
// jumps back to opforge_asc_call (on its own stack, so a stack overflow is caught too), which reports it as a
// `crash` with the kernel and core; outside a call the signal keeps its previous handling.
constexpr int E_CRASH = 11;
struct Guard {
    sigjmp_buf jump;
    volatile sig_atomic_t signal = 0;
    struct sigaction saved[3];
    static constexpr int kSignals[3] = {SIGFPE, SIGSEGV, SIGBUS};
};
inline Guard& guard() {
    static Guard g;
    return g;
}
inline void on_signal(int sig) {
    guard().signal = sig;
    siglongjmp(guard().jump, 1);
}
inline void arm() {
    static std::vector<char> stack(1 << 16);
    stack_t alt{};
    alt.ss_sp = stack.data();
    alt.ss_size = stack.size();
    sigaltstack(&alt, nullptr);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++) sigaction(Guard::kSignals[i], &sa, &guard().saved[i]);
}
inline void disarm() {
    for (int i = 0; i < 3; i++) sigaction(Guard::kSignals[i], &guard().saved[i], nullptr);
}
inline std::string crash_message(int sig) {
    const opforge_asc::Machine& m = opforge_asc::M();
    std::string what = sig == SIGFPE ? "an arithmetic fault (SIGFPE: an integer division by zero?)"
                                     : "a memory fault (a wild pointer, or a stack overflow)";
    return what + " in kernel " + (m.kernel.empty() ? std::string("(host code)") : m.kernel) + ", core " +
           std::to_string(m.block_idx) + " of " + std::to_string(m.block_num);
}
}  // namespace opforge_host

extern "C" {
const char* opforge_asc_error(void) { return opforge_host::last_error().c_str(); }

void opforge_asc_configure(int schedule, unsigned long long seed) { opforge_asc::configure(schedule, seed); }

// "module.fn nargs returns" per line: the functions the binding's PYBIND11_MODULE / TORCH_LIBRARY registered
const char* opforge_asc_functions(void) {
    static std::string listing;
    listing.clear();
    for (auto& [name, f] : opforge_host::functions())
        listing += name + " " + std::to_string(f.nargs) + " " + std::to_string(f.returns) + "\n";
    return listing.c_str();
}

void* opforge_asc_gm_alloc(unsigned long long bytes, const char* what, int poison) {
    try {
        return opforge_asc::gm_alloc(bytes, what, poison != 0);
    } catch (...) {
        return nullptr;
    }
}

void opforge_asc_gm_release_all(void) { opforge_asc::gm_release_all(); }

// whether the last call's kernels added into GM atomically (SetAtomicAdd): their float sums' rounding then
// depends on the order the cores ran, as on the NPU
int opforge_asc_any_atomic(void) { return opforge_asc::M().any_atomic ? 1 : 0; }

int opforge_asc_call(const char* fn, OpforgeAscValue* args, int n, OpforgeAscValue* outs, int max_outs, int* n_outs) {
    *n_outs = 0;
    opforge_host::last_error().clear();
    opforge_asc::M().kernel = "";
    opforge_host::arm();
    if (sigsetjmp(opforge_host::guard().jump, 1)) {
        opforge_host::disarm();
        opforge_host::last_error() = opforge_host::crash_message(opforge_host::guard().signal);
        return opforge_host::E_CRASH;
    }
    struct Disarm {
        ~Disarm() { opforge_host::disarm(); }
    } disarm_on_return;
    try {
        auto found = opforge_host::functions().find(fn);
        if (found == opforge_host::functions().end())
            throw opforge_asc::EmuError{opforge_asc::E_BADARG, std::string("no bound function ") + fn};
        opforge_asc::begin_call();
        std::vector<OpforgeAscValue> out;
        found->second.call(args, n, out);
        if ((int)out.size() > max_outs)
            throw opforge_asc::EmuError{opforge_asc::E_HOST, "the function returned more than " +
                                                                 std::to_string(max_outs) + " values"};
        for (size_t i = 0; i < out.size(); i++) outs[i] = out[i];
        *n_outs = (int)out.size();
        return 0;
    } catch (const opforge_asc::EmuError& e) {
        opforge_host::last_error() = e.msg;
        return e.code;
    } catch (const std::exception& e) {
        opforge_host::last_error() = std::string("the host code threw ") + e.what();
        return opforge_asc::E_HOST;
    } catch (...) {
        opforge_host::last_error() = "the host code threw a non-standard exception";
        return opforge_asc::E_HOST;
    }
}

void opforge_tiling_load(void* dst, const void* src, unsigned long bytes, const char* file, unsigned line) {
    const opforge_host::TilingState& t = opforge_host::tiling_state();
    if (src == t.ptr && bytes > t.bytes)
        throw opforge_asc::EmuError{
            opforge_asc::E_OOB, "GET_TILING_DATA (" + std::string(opforge_asc::Loc{file, line}.base()) + ":" + std::to_string(line) + "): the kernel's "
            "tiling struct is " + std::to_string(bytes) + " bytes, and the TilingFunc's tiling data is " +
            std::to_string(t.bytes) + " (SetDataSize)"};
    std::memcpy(dst, src, bytes);
}

unsigned long long opforge_tiling_key(void) { return opforge_host::tiling_state().key; }
}
