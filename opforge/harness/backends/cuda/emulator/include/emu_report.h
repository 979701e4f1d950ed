// opforge CUDA emulator: the deadlock message, "threads 16-31 wait at __syncthreads (line 9) while
// 0-15 wait at __shfl_down_sync (line 7); the mask 0xffffffff of ... names lanes 16-31 of warp 0,
// which exited".
#pragma once
#include <string>
#include "emu_warp.h"

namespace opforge_emu {
static std::string ranges(const int* ids, int count) {
    std::string out;
    int shown = 0;
    for (int i = 0; i < count; ++i) {
        int j = i;
        while (j + 1 < count && ids[j + 1] == ids[j] + 1) ++j;
        if (shown++ == 6) { out += ", ... (" + std::to_string(count) + " threads)"; break; }
        if (!out.empty()) out += ", ";
        out += std::to_string(ids[i]);
        if (j > i) out += "-" + std::to_string(ids[j]);
        i = j;
    }
    return out;
}

static std::string wait_label(const Thread& t) {
    const char* name = t.state == T_SYNC ? "__syncthreads" : kKindNames[t.kind];
    return std::string(name) + " (line " + std::to_string(t.line) + ")";
}

// The first collective whose mask names lanes that exited or do not exist.
static std::string missing_lanes() {
    for (int i = 0; i < E.n; ++i) {
        const Thread& t = E.threads[i];
        if (t.state != T_WARP) continue;
        int base = t.lin & ~31, gone[32], absent[32], ng = 0, na = 0;
        for (int l = 0; l < 32; ++l) {
            if (!(t.mask >> l & 1)) continue;
            if (base + l >= E.n) absent[na++] = l;
            else if (E.threads[base + l].state == T_EXITED) gone[ng++] = l;
        }
        char head[96];
        snprintf(head, sizeof head, "; the mask 0x%08x of %s names lanes ", t.mask, wait_label(t).c_str());
        if (ng) return head + ranges(gone, ng) + " of warp " + std::to_string(base / 32) + ", which exited";
        if (na) return head + ranges(absent, na) + " of warp " + std::to_string(base / 32) +
                       ", which do not exist in a block of " + std::to_string(E.n) + " threads";
    }
    return "";
}

static void report_deadlock() {
    std::string labels[64], text;
    static int ids[64][kMaxThreads];
    int counts[64] = {0}, groups = 0;
    for (int i = 0; i < E.n; ++i) {
        const Thread& t = E.threads[i];
        if (t.state != T_SYNC && t.state != T_WARP) continue;
        std::string label = wait_label(t);
        int g = 0;
        while (g < groups && labels[g] != label) ++g;
        if (g == groups) {
            if (groups == 64) continue;
            labels[groups++] = label;
        }
        ids[g][counts[g]++] = t.lin;
    }
    for (int g = 0; g < groups; ++g)
        text += (g ? " while " : "threads ") + ranges(ids[g], counts[g]) + " wait at " + labels[g];
    format_error(E_DEADLOCK, "deadlock: kernel %s (launched at line %d), block (%u,%u,%u): %s%s", E.kernel,
                 E.launch_line, blockIdx.x, blockIdx.y, blockIdx.z, text.c_str(), missing_lanes().c_str());
}
}  // namespace opforge_emu
