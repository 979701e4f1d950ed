// The library's C entry points, compiled once per build in host_entry.cpp: Python (emulator/library.py) lists the
// bound functions, allocates GM for a call's tensors, calls a function with Values and reads back an error.
// Every opforge_asc::EmuError and std::exception stops at opforge_asc_call: a code and a message, never a crash.
#pragma once
#include <string>

#include "opforge_host/bind.h"
#include "opforge_host/exec.h"

namespace opforge_host {
inline std::string& last_error() {
    static std::string s;
    return s;
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

int opforge_asc_call(const char* fn, OpforgeAscValue* args, int n, OpforgeAscValue* outs, int max_outs, int* n_outs) {
    *n_outs = 0;
    opforge_host::last_error().clear();
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
